import Foundation
import Testing

@testable import XMPPCore

/// The byte-level base64 against Foundation's (independent code) and RFC 4648's vectors.
@Suite struct Base64Tests {
    @Test(arguments: [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")])
    func rfc4648Vectors(plain: String, encoded: String) {
        #expect(Base64.encode(Array(plain.utf8)) == encoded)
        var appended = Array("x".utf8)
        Base64.encode(Array(plain.utf8), into: &appended)
        #expect(String(decoding: appended, as: UTF8.self) == "x" + encoded)
        #expect(Base64.decode(Array(encoded.utf8)) == Array(plain.utf8))
    }

    @Test func agreesWithFoundationOnEveryLengthAndByte() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...80 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let ours = Base64.encode(bytes)
            #expect(ours == Data(bytes).base64EncodedString())
            #expect(Base64.decode(Array(ours.utf8)) == bytes)
        }
        let all = (0...255).map(UInt8.init)
        #expect(Base64.encode(all) == Data(all).base64EncodedString())
    }

    @Test(arguments: ["Zg", "Zg=", "Z===", "=Zg=", "Zg==Zg==", "Zm9v!", "Zm9v\u{E9}", "Zm 9v"])
    func refusesWhatIsNotBase64(text: String) {
        #expect(Base64.decode(Array(text.utf8)) == nil)
        #expect(Data(base64Encoded: text) == nil)
    }

    /// Stricter than Foundation here, which reads `Zg=a` as two bytes: RFC 4648 §3.3 has nothing after
    /// padding.
    @Test func refusesTextAfterPadding() {
        #expect(Base64.decode(Array("Zg=a".utf8)) == nil)
    }

    @Test func skipsWhitespaceWhenAsked() {
        #expect(Base64.decode(Array(" Zm9v\r\nYmFy\t".utf8), skippingWhitespace: true) == Array("foobar".utf8))
        #expect(Base64.decode(Array(" Zm9v".utf8)) == nil)
    }

    @Test func loginPayloadsRoundTrip() {
        #expect(LoginMachine.base64([]) == "=")
        #expect(LoginMachine.decodeBase64("=") == [])
        #expect(LoginMachine.decodeBase64(" = ") == [])
        #expect(LoginMachine.decodeBase64("") == [])
        #expect(LoginMachine.decodeBase64(" Zm9v\nYmFy ") == Array("foobar".utf8))
        #expect(LoginMachine.decodeBase64("Zm9v!") == nil)
    }
}
