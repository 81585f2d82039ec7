import Foundation
import Testing

/// The command line's HTTP client, against a stand-in server (Python's http.server) that
/// answers every API request with a redirect to another host name for the same server.
@Suite("The command line's API client")
struct APIClientTests {
    static let redirectingServer = #"""
        import http.server, sys
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get('Content-Length') or 0))
                print(self.path, self.headers.get('Authorization'), flush=True)
                if self.path.startswith('/v1/'):
                    self.send_response(307)
                    self.send_header('Location', 'http://localhost:%d/stolen' % port)
                    self.send_header('Content-Length', '0')
                    self.end_headers()
                else:
                    self.send_response(200)
                    self.send_header('Content-Length', '2')
                    self.end_headers()
                    self.wfile.write(b'{}')
            def log_message(self, *args):
                pass
        server = http.server.HTTPServer(('127.0.0.1', 0), Handler)
        port = server.server_address[1]
        print(port, flush=True)
        server.timeout = 3
        server.handle_request()
        server.handle_request()
        """#

    @Test("a redirect is not followed: the key goes to no other host, and the command says why it stopped")
    func noRedirects() throws {
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", Self.redirectingServer]
        let output = Pipe()
        python.standardOutput = output
        try python.run()
        defer { if python.isRunning { python.terminate() } }
        var seen = Data()
        while !seen.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            try #require(!chunk.isEmpty, "the stand-in server did not start")
            seen += chunk
        }
        let port = try #require(Int(String(decoding: seen, as: UTF8.self).split(separator: "\n")[0]))
        let charged = try CLIRunner.run([
            "charge", "--token", "tok_x", "--amount", "100", "--currency", "EUR", "--key", "sk_test_secret",
            "--server", "http://127.0.0.1:\(port)",
        ])
        #expect(charged.status == 2)
        #expect(charged.stderr.contains("redirect") && charged.stderr.contains("not followed"), "\(charged.stderr)")
        python.waitUntilExit()
        let requests = String(decoding: seen + output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(requests.contains("/v1/transactions Bearer sk_test_secret"), "\(requests)")
        #expect(!requests.contains("/stolen"), "the key was sent on to the redirect's host: \(requests)")
    }
}
