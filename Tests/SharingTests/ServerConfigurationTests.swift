import Foundation
import Sharing
import TestSupport
import XCTest

final class ServerConfigurationTests: XCTestCase {
    func testTheURLGivesHostPortUserAndDatabase() throws {
        let configuration = try ServerConfiguration(url: "postgresql://ann@db.example:6543/lists", environment: [:])
        XCTAssertEqual([configuration.host, String(configuration.port), configuration.username, configuration.database], ["db.example", "6543", "ann", "lists"])
        XCTAssertEqual(try ServerConfiguration(url: "postgres://ann@db.example/lists", environment: [:]).port, 5432)
        XCTAssertNil(try configuration.connection.password)
    }

    func testThePasswordComesFromTheURLThenPGPASSWORDThenThePasswordFile() throws {
        let folder = try temporaryFolder(self)
        let file = folder.appendingPathComponent("pgpass")
        try "# comment\nother:*:*:ann:wrong\ndb.example:*:lists:ann:from\\:file\n".write(to: file, atomically: true, encoding: .utf8)
        let url = "postgresql://ann@db.example/lists"
        XCTAssertEqual(try ServerConfiguration(url: url, environment: ["PGPASSFILE": file.path]).connection.password, "from:file")
        XCTAssertEqual(try ServerConfiguration(url: url, environment: ["PGPASSFILE": file.path, "PGPASSWORD": "env"]).connection.password, "env")
        let inURL = try ServerConfiguration(url: "postgresql://ann:secret@db.example/lists", environment: ["PGPASSWORD": "env"])
        XCTAssertEqual(try inURL.connection.password, "secret")
        XCTAssertFalse(inURL.description.contains("secret"), "a configuration can be logged")
        XCTAssertNil(try ServerConfiguration(url: "postgresql://bob@db.example/lists", environment: ["PGPASSFILE": file.path]).connection.password)
    }

    func testAnAddressWithoutUserOrDatabaseIsRefusedWithoutShowingThePassword() {
        for url in ["http://ann@db.example/lists", "postgresql://db.example/lists", "postgresql://ann:secret@db.example"] {
            XCTAssertThrowsError(try ServerConfiguration(url: url, environment: [:]), url) { error in
                XCTAssertFalse("\(error)".contains("secret"), "\(error)")
                XCTAssertTrue("\(error)".contains("postgresql://USER@HOST"), "\(error)")
                let sharingError = error as? SharingError
                XCTAssertEqual(sharingError?.kind, .invalidURL)
                XCTAssertNotNil(sharingError?.url, "the address, as a field")
                XCTAssertFalse(sharingError?.url?.contains("secret") ?? true, "without its password")
            }
        }
    }

    /// TLS settings as libpq reads them: the URL's query first, then PGSSLMODE and
    /// PGSSLROOTCERT, `prefer` by default; a mode or a setting it does not know is refused,
    /// naming it.
    func testTLSSettingsComeFromTheURLThenTheEnvironmentAndDefaultToPrefer() throws {
        let url = "postgresql://ann@db.example/lists"
        XCTAssertEqual(try ServerConfiguration(url: url, environment: [:]).sslMode, .prefer)
        let fromEnvironment = try ServerConfiguration(url: url, environment: ["PGSSLMODE": "verify-ca", "PGSSLROOTCERT": "/etc/ca.pem"])
        XCTAssertEqual(fromEnvironment.sslMode, .verifyCA)
        XCTAssertEqual(fromEnvironment.sslRootCertificate, "/etc/ca.pem")
        let fromURL = try ServerConfiguration(url: url + "?sslmode=verify-full&sslrootcert=system", environment: ["PGSSLMODE": "disable"])
        XCTAssertEqual(fromURL.sslMode, .verifyFull)
        XCTAssertEqual(fromURL.sslRootCertificate, "system")
        XCTAssertEqual(try ServerConfiguration(url: url + "?sslmode=disable", environment: [:]).sslMode, .disable)
        for (bad, named) in [("?sslmode=verify", "sslmode verify is not one of disable, prefer, require, verify-ca, verify-full"),
                             ("?sslmod=require", "sslmod is not a setting this library reads"),
                             ("?sslmode=require&sslrootcert=system", "sslrootcert=system needs sslmode=verify-full")] {
            XCTAssertThrowsError(try ServerConfiguration(url: url + bad, environment: [:])) { error in
                XCTAssertEqual((error as? SharingError)?.kind, .invalidURL)
                XCTAssertTrue("\(error)".contains(named), "\(error)")
            }
        }
    }
}
