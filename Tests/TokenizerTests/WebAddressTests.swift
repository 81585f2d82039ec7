import Payments
import Testing
import Tokenizer

/// Addresses read as a browser reads them (the WHATWG URL standard's host parser), and kept in
/// that one spelling.
@Suite("Web addresses")
struct WebAddressTests {
    @Test(
        "every spelling of a host is kept as a browser reads it",
        arguments: [
            ("http://2130706433:8080/done", "http://127.0.0.1:8080/done"),
            ("http://0x7f.0.0.1/", "http://127.0.0.1/"),
            ("http://0x7f000001/", "http://127.0.0.1/"),
            ("http://0177.0.0.1/", "http://127.0.0.1/"),
            ("http://127.1/x?y=1", "http://127.0.0.1/x?y=1"),
            ("http://127.0.0.1./", "http://127.0.0.1/"),
            ("http://0/", "http://0.0.0.0/"),
            ("http://10.0x10.0300/", "http://10.16.0.192/"),
            ("https://[::1]/", "https://[::1]/"),
            ("https://[0:0:0:0:0:0:0:1]:443/a", "https://[::1]/a"),
            ("https://[::ffff:127.0.0.1]/", "https://[::ffff:7f00:1]/"),
            ("https://[2001:DB8:0:0:1:0:0:1]/", "https://[2001:db8::1:0:0:1]/"),
            ("HTTPS://Shop.Example:0443/Done?x=1#f", "https://shop.example/Done?x=1#f"),
            ("http://shop.example:80/", "http://shop.example/"),
            ("https://Bücher.example/", "https://xn--bcher-kva.example/"),
            ("https://shop.example", "https://shop.example/"),
            ("https://shop.example?x=1", "https://shop.example/?x=1"),
            ("https://shop.example:8443/a/b", "https://shop.example:8443/a/b"),
            // Not a number at the end (g is no hex digit): a name, as a browser takes it.
            ("http://1.2.3.0x9g/", "http://1.2.3.0x9g/"),
        ]
    )
    func spellings(given: String, kept: String) throws {
        #expect(try WebAddress(given, param: "url").text == kept)
    }

    @Test(
        "what a browser would not open, or would open elsewhere, is refused with what to change",
        arguments: [
            ("https://shop.example:99999999999999999999/", "port"),
            ("https://shop.example:65536/", "port"),
            ("https://shop.example:0/", "port"),
            ("https://shop.example:8o/", "port"),
            ("https://[a:b]/", "IPv6"),
            ("https://[::1/", "IPv6"),
            ("https://[::1]x/", "IPv6"),
            ("https://[::1%25eth0]/", "IPv6"),
            ("http://1.2.3.4.5/", "IPv4"),
            ("http://example.123/", "IPv4"),
            ("http://256.0.0.1/", "IPv4"),
            ("http://0x100000000/", "IPv4"),
            ("https://user:pw@shop.example/", "user name"),
            ("https://shop.example\\@evil.example/", "backslash"),
            ("https://shop .example/", "spaces"),
            ("ftp://shop.example/", "absolute"),
            ("https:///path", "absolute"),
            ("shop.example/done", "absolute"),
            ("https://shop_example/", "host"),
        ]
    )
    func refused(given: String, said: String) {
        let error = #expect(throws: VaultError.self) { try WebAddress(given, param: "return_url") }
        #expect(error?.code == .invalidAddress && error?.param == "return_url")
        #expect(error?.message.contains(said) == true, "\(given): \(error?.message ?? "")")
    }

    @Test("the host is known for what it is: a name, an IPv4 or an IPv6 address")
    func hosts() throws {
        #expect(try WebAddress("http://127.1/", param: "url").host == .ipv4([127, 0, 0, 1]))
        #expect(try WebAddress("https://Shop.Example/", param: "url").host == .domain("shop.example"))
        #expect(try WebAddress("https://[::1]:8443/", param: "url").host == .ipv6([UInt8](repeating: 0, count: 15) + [1]))
        #expect(try WebAddress("https://[::1]:8443/", param: "url").port == 8443)
    }

    @Test("a return address is a web address or an app's own scheme, and says what a page's form-action names for it")
    func returnAddresses() throws {
        let app = try ReturnAddress("Com-Your-App://action/?record_id=123", param: "return_url")
        #expect(app.text == "com-your-app://action/?record_id=123" && app.scheme == "com-your-app" && app.policySource == "com-your-app:")
        let web = try ReturnAddress("HTTPS://Shop.Example:8443/done?x=1", param: "return_url")
        #expect(web.text == "https://shop.example:8443/done?x=1" && web.policySource == "https://shop.example:8443")
        #expect(try ReturnAddress("https://[::1]/", param: "return_url").policySource == "https://[::1]")
        #expect(try ReturnAddress("myapp:done", param: "return_url").text == "myapp:done")
        for (given, said) in [
            ("javascript:alert(1)", "javascript:"), ("DATA:text/html,x", "data:"), ("about:blank", "about:"), ("ftp ://x", "absolute URL"),
            ("app://x y", "spaces"), ("app://x\\y", "backslashes"), ("://x", "absolute URL"), ("com.app:", "absolute URL"),
            ("https://user:pw@shop.example/", "user name"),
            // Issue 64: browser-internal and system handlers that a deny-list of six let through.
            ("view-source:https://shop.example/", "view-source:"), ("intent://x#Intent;S.browser_fallback_url=javascript:alert(1);end", "intent:"),
            ("chrome://settings", "chrome:"), ("filesystem:https://shop.example/temporary/x", "filesystem:"), ("jar:https://x!/y", "jar:"),
            ("livescript:alert(1)", "livescript:"), ("ms-officecmd:x", "ms-officecmd:"), ("search-ms:query=x", "search-ms:"),
            ("MS-Settings:display", "ms-settings:"), ("chrome-extension://abc/x", "chrome-extension:"), ("mailto:a@b.example", "mailto:"),
        ] {
            let error = #expect(throws: VaultError.self) { try ReturnAddress(given, param: "return_url") }
            #expect(error?.param == "return_url" && error?.message.contains(said) == true, "\(given): \(error?.message ?? "")")
        }
    }
}
