import Foundation
import ObjectStore
import XCTest

/// JSON lines files: one object a line, keys naming properties.
final class JSONLinesImportTests: XCTestCase {
    private func importSamples(_ text: String, name: String = "samples.jsonl") throws -> (PersistentStore, Result<ImportResult, ImportError>) {
        let folder = try temporaryFolder(self)
        let store = try ImportFixtures.store(ImportFixtures.samplesModel(), in: folder)
        let file = try ImportFixtures.write(text, to: name, in: folder)
        do {
            return (store, .success(try ObjectImporter(store: store, entityName: "Sample", file: file).run()))
        } catch let error as ImportError {
            return (store, .failure(error))
        }
    }

    func testValuesAreReadAsSeedFilesReadThemAndBlankLinesAreSkipped() throws {
        let text = """
            \u{FEFF}{"name": "a", "count": 42, "score": 2.5, "flag": true, "day": "2026-11-07", "data": "aGk=", "note": "x, \\"y\\""}

            {"name": "b", "count": 3.0, "score": 7, "day": 1700000000, "note": null}\r
               \t
            {"name": "c"}

            """
        let (store, outcome) = try importSamples(text)
        let result = try outcome.get()
        XCTAssertEqual(result.recordsImported, 3)
        XCTAssertEqual(result.nextLine, 6)
        XCTAssertEqual(try ImportFixtures.rows(store, "Sample", ["name", "count", "score", "flag", "day", "data", "note"]), [
            [.string("a"), .integer(42), .double(2.5), .bool(true), Value.fromJSON("2026-11-07", as: .date)!, .binary(Data("hi".utf8)), .string("x, \"y\"")],
            [.string("b"), .integer(3), .double(7), .bool(false), .date(Date(timeIntervalSince1970: 1_700_000_000)), .null, .null],
            [.string("c"), .null, .null, .bool(false), .null, .null, .null],
        ], "left-out keys get the model's defaults")
    }

    func testFormatsFollowTheExtension() throws {
        XCTAssertEqual(ImportFormat(fileExtension: "csv"), .csv)
        XCTAssertEqual(ImportFormat(fileExtension: "CSV"), .csv)
        for ext in ["jsonl", "ndjson", "json"] { XCTAssertEqual(ImportFormat(fileExtension: ext), .jsonLines) }
        XCTAssertNil(ImportFormat(fileExtension: "txt"))
        XCTAssertNil(ImportFormat(fileExtension: ""))

        let (store, outcome) = try importSamples("{\"name\": \"a\"}\n", name: "samples.ndjson")
        XCTAssertEqual(try outcome.get().recordsImported, 1)
        XCTAssertEqual(try ImportFixtures.rows(store, "Sample", ["name"]), [[.string("a")]])
    }

    func testALineThatIsNotAJSONObjectStopsTheImportAtIt() throws {
        let (store, outcome) = try importSamples("{\"name\": \"a\"}\n[1, 2]\n{\"name\": \"c\"}\n")
        guard case .failure(let error) = outcome else { return XCTFail("imported \(outcome)") }
        XCTAssertEqual(error.kind, .badRecord)
        XCTAssertEqual(error.line, 2)
        XCTAssertEqual(error.message, "[1, 2] is not a JSON object; write one object per line, like {\"name\": \"value\"}; fix the line and import again to resume there")
        XCTAssertEqual(try ImportFixtures.rows(store, "Sample", ["name"]), [[.string("a")]])

        let (_, broken) = try importSamples("{\"name\": \"a\",\n")
        guard case .failure(let notJSON) = broken else { return XCTFail("imported \(broken)") }
        XCTAssertEqual(notJSON.line, 1)
        XCTAssertTrue(notJSON.message.hasPrefix("not valid JSON ({\"name\": \"a\",)"), notJSON.message)
    }

    func testWrongTypesAndUnknownKeysNameTheLineAndTheKey() throws {
        let (_, wrongType) = try importSamples("{\"name\": \"a\"}\n{\"name\": \"b\", \"count\": \"many\"}\n")
        guard case .failure(let error) = wrongType else { return XCTFail("imported \(wrongType)") }
        XCTAssertEqual(error.description, "samples.jsonl:2: count: 'many' is not an integer; fix the line and import again to resume there")

        let (_, wrongBool) = try importSamples("{\"name\": \"b\", \"flag\": 1}\n")
        guard case .failure(let bool) = wrongBool else { return XCTFail("imported \(wrongBool)") }
        XCTAssertEqual(bool.field, "flag")
        XCTAssertTrue(bool.message.hasPrefix("1 is not true or false"), bool.message)

        let (store, unknown) = try importSamples("{\"name\": \"a\"}\n{\"name\": \"b\", \"colour\": \"red\"}\n")
        guard case .failure(let key) = unknown else { return XCTFail("imported \(unknown)") }
        XCTAssertEqual(key.kind, .badRecord)
        XCTAssertEqual(key.line, 2)
        XCTAssertEqual(key.field, "colour")
        XCTAssertTrue(key.message.hasPrefix("Sample has no attribute or to-one relationship 'colour'; Sample takes name, count, score, flag, day, data, note"), key.message)
        XCTAssertEqual(try ImportFixtures.rows(store, "Sample", ["name"]), [[.string("a")]])
    }

    func testNumbersOutsideTheRangesAreRefusedWithTheRangeNotWrapped() throws {
        let cases: [(String, String)] = [
            ("\"count\": 18446744073709551615", "count: 18446744073709551615 is outside the integer range (-9223372036854775808 to 9223372036854775807)"),
            ("\"count\": -9223372036854775809", "count: -9223372036854775809 is outside the integer range"),
            ("\"day\": 1e300", "day: 1e+300 seconds since 1970 is outside the date range (the years 1 to 9999"),
        ]
        for (field, message) in cases {
            let (store, result) = try importSamples("{\"name\": \"a\", \(field)}\n")
            guard case .failure(let error) = result else { XCTFail("imported \(field): \(result)"); continue }
            XCTAssertTrue(error.description.contains("samples.jsonl:1: \(message)"), error.description)
            XCTAssertEqual(try ObjectContext(store: store).count(for: FetchRequest<ManagedObject>(entityName: "Sample")), 0, "nothing wrapped around was saved")
        }
        // The largest integer still fits.
        let (_, largest) = try importSamples("{\"name\": \"a\", \"count\": 9223372036854775807}\n")
        guard case .success = largest else { return XCTFail("\(largest)") }
    }
}
