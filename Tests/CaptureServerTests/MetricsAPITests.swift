import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Payments
import StoreTestSupport
import Testing
import Tokenizer

@Suite("HTTP API: metrics")
struct MetricsAPITests {
    @Test(
        "GET /metrics counts requests by route template and status, tokens and transactions by outcome, and holds no ids or card data",
        arguments: StoreKind.allCases
    )
    func counts(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let (_, tokenData) = try await client.send(.post, "/v1/tokens", key: fixture.shop.publishable, json: visaBody)
            let token = try decode(TokenBody.self, tokenData)
            let declining = #"{"number": "4000000000000002", "exp_month": 12, "exp_year": 2030}"#
            let (_, declinedData) = try await client.send(.post, "/v1/tokens", key: fixture.shop.publishable, json: declining)
            let declined = try decode(TokenBody.self, declinedData)
            var charged: [Data] = []
            for id in [token.id, declined.id] {
                let charge = #"{"token": "\#(id)", "amount": 500, "currency": "USD"}"#
                let (status, body) = try await client.send(.post, "/v1/transactions", key: fixture.shop.secret, json: charge)
                #expect(status == .created)
                charged.append(body)
            }
            let paid = try #require(try JSONSerialization.jsonObject(with: charged[0]) as? [String: Any])["id"] as? String
            #expect(
                try await client.send(.post, "/v1/transactions/\(try #require(paid))/refunds", key: fixture.shop.secret, json: #"{"amount": 100}"#).0
                    == .created
            )
            #expect(try await client.send(.get, "/v1/tokens/\(token.id)", key: fixture.shop.secret).0 == .ok)
            #expect(try await client.send(.get, "/v1/tokens/tok_0000000000000000000000", key: fixture.shop.secret).0 == .notFound)
            #expect(try await client.send(.get, "/nowhere", key: nil).0 == .notFound)

            let (status, body) = try await client.send(.get, "/metrics", key: nil)
            #expect(status == .ok)
            let text = String(decoding: body, as: UTF8.self)
            let lines = Set(text.split(separator: "\n").map(String.init))
            #expect(lines.contains(#"http_requests_total{method="POST",route="/v1/tokens",status="201"} 2"#))
            #expect(lines.contains(#"http_requests_total{method="POST",route="/v1/transactions",status="201"} 2"#))
            #expect(lines.contains(#"http_requests_total{method="GET",route="/v1/tokens/{id}",status="200"} 1"#))
            #expect(lines.contains(#"http_requests_total{method="GET",route="/v1/tokens/{id}",status="404"} 1"#))
            #expect(lines.contains(#"http_requests_total{method="GET",route="NotFound",status="404"} 1"#))
            #expect(lines.contains(#"tokens_created_total{source="card"} 2"#))
            #expect(lines.contains(#"transactions_total{status="succeeded"} 1"#))
            #expect(lines.contains(#"transactions_total{status="declined"} 1"#))
            // Known series from the start, at 0 (issue 65: no failed series until a failure).
            #expect(lines.contains(#"transactions_total{status="failed"} 0"#) && lines.contains(#"transactions_total{status="pending"} 0"#))
            #expect(lines.contains(#"webhook_deliveries_total{outcome="failed"} 0"#) && lines.contains("transactions_settled_by_sweeper_total 0"))
            #expect(lines.contains("refunds_total 1"))
            #expect(lines.contains(#"http_request_duration_seconds_count{method="POST",route="/v1/tokens"} 2"#))
            // Errors by status and code: 503s by cause (issue 65).
            #expect(lines.contains(#"api_errors_total{status="404",code="token_not_found"} 1"#))
            #expect(lines.contains(#"api_errors_total{status="503",code="storage_unavailable"} 0"#))
            #expect(lines.contains("transactions_pending 0.0") && lines.contains("sweeper_last_success_timestamp_seconds 0.0"))
            if store == .postgres {
                // The connections this server holds and waits for; none refused.
                #expect(lines.contains { $0.hasPrefix("database_connections_in_use ") } && lines.contains("database_unavailable_total 0"))
                #expect(lines.contains("database_connection_waits 0.0"))
            }
            // Every metric with its help (issue 65: no # HELP lines).
            let families = Set(
                lines.filter { !$0.hasPrefix("#") }.compactMap { $0.split(whereSeparator: { $0 == "{" || $0 == " " }).first }.map {
                    String($0).replacing(/_(bucket|count|sum)$/, with: "")
                }
            )
            #expect(families.count >= 10, "\(families)")
            for family in families {
                #expect(lines.contains { $0.hasPrefix("# HELP \(family) ") && $0.count > "# HELP \(family) ".count + 10 }, "\(family) has no help")
            }
            for secret in ["4242424242424242", "4000000000000002", token.id, declined.id, fixture.shop.merchant.id] {
                #expect(!text.contains(secret), "metrics hold \(secret)")
            }
            // The CVC as a value anywhere: a label's, or a sample's (durations may hold the
            // digits 123, as in 0.00123, so a bare search would be a coin toss).
            #expect(!text.contains(#""123""#) && !lines.contains { $0.hasSuffix(" 123") })
        }
    }

    /// docs/alerts.yml names only what the server exports (issue 65's rules file).
    @Test("every metric the alerting rules name is in the server's exposition from the start")
    func alertRules() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let rules = try String(contentsOf: root.appendingPathComponent("docs/alerts.yml"), encoding: .utf8)
        let named = Set(rules.matches(of: /\b([a-z][a-z_]+_(?:total|seconds))\b/).map { String($0.output.1) })
        #expect(named.count >= 5, "\(named)")
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            // One request, so that the request counter has a series.
            _ = try await client.send(.get, "/healthz", key: nil)
            let text = String(decoding: try await client.send(.get, "/metrics", key: nil).1, as: UTF8.self)
            let exported = Set(text.split(separator: "\n").compactMap { $0.split(whereSeparator: { $0 == "{" || $0 == " " }).first.map(String.init) })
            for name in named {
                #expect(exported.contains(name) || exported.contains(name + "_count"), "\(name) is not exported")
            }
        }
    }
}
