import Foundation
import ObjectStore
import XCTest

/// CSV files as people write them, imported into a real store.
final class CSVImportTests: XCTestCase {
    private func importSamples(_ csv: String, name: String = "samples.csv") throws -> (PersistentStore, ImportResult) {
        let folder = try temporaryFolder(self)
        let store = try ImportFixtures.store(ImportFixtures.samplesModel(), in: folder)
        let file = try ImportFixtures.write(csv, to: name, in: folder)
        return (store, try ObjectImporter(store: store, entityName: "Sample", file: file).run())
    }

    private func importError(_ csv: String) throws -> ImportError? {
        let folder = try temporaryFolder(self)
        let store = try ImportFixtures.store(ImportFixtures.samplesModel(), in: folder)
        let file = try ImportFixtures.write(csv, to: "samples.csv", in: folder)
        return ImportFixtures.importError { try ObjectImporter(store: store, entityName: "Sample", file: file).run() }
    }

    func testQuotedFieldsDoubledQuotesCommasAndNewlinesInsideQuotes() throws {
        let csv = [
            "name,note,count",
            "plain,\"a, b\",1",
            "\"say \"\"hi\"\"\",\"two",
            "lines\",2",
            "empty,\"\",3",
            "last,\"ends with a quote \"\"\",4",
            "",
            "",
        ].joined(separator: "\n")
        let (store, result) = try importSamples(csv)
        XCTAssertEqual(result.outcome, .finished)
        XCTAssertEqual(result.recordsImported, 4)
        XCTAssertEqual(result.nextLine, 8, "the blank line at the end is read too")
        XCTAssertEqual(try ImportFixtures.rows(store, "Sample", ["name", "note", "count"]), [
            [.string("plain"), .string("a, b"), .integer(1)],
            [.string("say \"hi\""), .string("two\nlines"), .integer(2)],
            [.string("empty"), .string(""), .integer(3)],
            [.string("last"), .string("ends with a quote \""), .integer(4)],
        ])
    }

    func testARecordsLineIsTheLineItStartsOnAfterNewlinesInsideQuotes() throws {
        let csv = "name,note,count\nfirst,\"one\ntwo\nthree\",1\nsecond,ok,many\n"
        let error = try XCTUnwrap(importError(csv))
        XCTAssertEqual(error.kind, .badRecord)
        XCTAssertEqual(error.line, 5, "line 2 holds a record of three lines, so the next one starts on line 5")
        XCTAssertEqual(error.field, "count")
        XCTAssertEqual(error.description, "samples.csv:5: count: 'many' is not an integer; fix the line and import again to resume there")
    }

    func testCRLFLineEndsAndAByteOrderMark() throws {
        let csv = "\u{FEFF}name,note,count\r\nfirst,\"a\r\nb\",1\r\nsecond,,2\r\n"
        let (store, result) = try importSamples(csv)
        XCTAssertEqual(result.recordsImported, 2)
        XCTAssertEqual(try ImportFixtures.rows(store, "Sample", ["name", "note", "count"]), [
            [.string("first"), .string("a\r\nb"), .integer(1)],
            [.string("second"), .null, .integer(2)],
        ], "the BOM is not part of the first column's name; line breaks inside quotes are kept as written")
    }

    func testEmptyFieldsAreNullAndQuotedEmptyFieldsAreEmptyText() throws {
        let (store, _) = try importSamples("name,note,count,score\na,,,\nb,\"\",\"\",\n")
        XCTAssertEqual(try ImportFixtures.rows(store, "Sample", ["name", "note", "count", "score"]), [
            [.string("a"), .null, .null, .null],
            [.string("b"), .string(""), .null, .null],
        ])
    }

    func testValuesAreTypedPerAttribute() throws {
        let csv = """
            name,count,score,flag,day,data
            a, 42 ,2.5,yes,2026-11-07,aGk=
            b,-7,1e3,NO,2026-11-07T10:30:00Z,
            c,3.0,7,1,2026-11-07T10:30:00.250Z,
            d,,,0,,

            """
        let (store, _) = try importSamples(csv)
        let day = { (text: String) in Value.fromJSON(text, as: .date)! }
        XCTAssertEqual(try ImportFixtures.rows(store, "Sample", ["count", "score", "flag", "day", "data"]), [
            [.integer(42), .double(2.5), .bool(true), day("2026-11-07"), .binary(Data("hi".utf8))],
            [.integer(-7), .double(1000), .bool(false), day("2026-11-07T10:30:00Z"), .null],
            [.integer(3), .double(7), .bool(true), day("2026-11-07T10:30:00.250Z"), .null],
            [.null, .null, .bool(false), .null, .null],
        ])
    }

    func testConversionErrorsNameTheLineTheFieldAndTheValue() throws {
        let cases: [(column: String, good: String, bad: String, message: String)] = [
            ("count", "1", "1.5", "'1.5' is not an integer"),
            ("score", "0.5", "abc", "'abc' is not a number"),
            ("flag", "yes", "maybe", "'maybe' is not a bool (write true/false, yes/no or 1/0)"),
            ("day", "2026-11-07", "07/11/2026", "'07/11/2026' is not a date (write dates as 2024-05-01 or 2024-05-01T12:00:00Z)"),
            ("data", "aGk=", "***", "'***' is not binary data (write it as base64 text)"),
        ]
        for (column, good, bad, message) in cases {
            let error = try XCTUnwrap(importError("name,\(column)\nfine,\(good)\nbad,\(bad)\n"), column)
            XCTAssertEqual(error.line, 3, column)
            XCTAssertEqual(error.field, column)
            XCTAssertEqual(error.message, message + "; fix the line and import again to resume there")
        }
    }

    func testValidationFailuresAreBadRecords() throws {
        let error = try XCTUnwrap(importError("name,count\n,1\n"))
        XCTAssertEqual(error.kind, .badRecord)
        XCTAssertEqual(error.line, 2)
        XCTAssertEqual(error.field, "name")
        XCTAssertEqual(error.message, "is required; give it a value; fix the line and import again to resume there")
    }

    func testMalformedRowsAreBadRecords() throws {
        let wrongCount = try XCTUnwrap(importError("name,count\na,1\nb,2,3\n"))
        XCTAssertEqual(wrongCount.line, 3)
        XCTAssertTrue(wrongCount.message.hasPrefix("has 3 fields but the header has 2 columns"), wrongCount.message)

        let unclosed = try XCTUnwrap(importError("name,note\na,ok\nb,\"never\nclosed\n"))
        XCTAssertEqual(unclosed.line, 3)
        XCTAssertTrue(unclosed.message.hasPrefix("the quote opened on line 3 is never closed"), unclosed.message)

        let afterQuote = try XCTUnwrap(importError("name,note\na,\"x\"y\n"))
        XCTAssertEqual(afterQuote.line, 2)
        XCTAssertTrue(afterQuote.message.hasPrefix("field 2 has 'y' after its closing quote"), afterQuote.message)
    }

    func testTextThatIsNotUTF8IsRefusedWithItsLine() throws {
        let folder = try temporaryFolder(self)
        let store = try ImportFixtures.store(ImportFixtures.samplesModel(), in: folder)
        let file = folder.appendingPathComponent("latin1.csv")
        try Data(Array("name,note\na,ok\nb,caf".utf8) + [0xE9, 0x0A]).write(to: file)  // é in Latin-1
        let error = try XCTUnwrap(ImportFixtures.importError { try ObjectImporter(store: store, entityName: "Sample", file: file).run() })
        XCTAssertEqual(error.line, 3)
        XCTAssertEqual(error.message, "field 2 is not UTF-8 text; save the file as UTF-8; fix the line and import again to resume there")
        XCTAssertEqual(try ImportFixtures.rows(store, "Sample", ["name"]), [[.string("a")]], "the record before it is imported")
    }

    func testAnUnknownColumnIsRefusedBeforeAnythingIsImported() throws {
        let folder = try temporaryFolder(self)
        let store = try ImportFixtures.store(Fixtures.worldCupModel(), in: folder)
        let file = try ImportFixtures.write("teamName,qualifyingZone,colour\nBrazil,South America,yellow\n", to: "teams.csv", in: folder)
        let error = try XCTUnwrap(ImportFixtures.importError { try ObjectImporter(store: store, entityName: "Team", file: file) })
        XCTAssertEqual(error.kind, .badHeader)
        XCTAssertEqual(error.line, 1)
        XCTAssertEqual(error.field, "colour")
        XCTAssertEqual(error.description, "teams.csv:1: colour: Team has no attribute or to-one relationship 'colour'; Team takes teamName, qualifyingZone, imageName, wins; nothing was imported")
        XCTAssertEqual(try ImportFixtures.teamNames(store), [])
    }

    func testAHeaderWithoutARequiredColumnOrWithAColumnTwiceIsRefused() throws {
        let folder = try temporaryFolder(self)
        let store = try ImportFixtures.store(Fixtures.worldCupModel(), in: folder)
        let missing = try ImportFixtures.write("teamName,wins\nBrazil,2\n", to: "missing.csv", in: folder)
        let error = try XCTUnwrap(ImportFixtures.importError { try ObjectImporter(store: store, entityName: "Team", file: missing) })
        XCTAssertEqual(error.kind, .badHeader)
        XCTAssertEqual(error.field, "qualifyingZone")
        XCTAssertTrue(error.message.hasPrefix("the header has no column for qualifyingZone, which every Team needs"), error.message)

        let twice = try ImportFixtures.write("teamName,qualifyingZone,teamName\n", to: "twice.csv", in: folder)
        let duplicate = try XCTUnwrap(ImportFixtures.importError { try ObjectImporter(store: store, entityName: "Team", file: twice) })
        XCTAssertEqual(duplicate.field, "teamName")
        XCTAssertEqual(duplicate.message, "the header names this column twice; remove one of them")
    }

    func testLeftOutColumnsGetTheModelsDefaults() throws {
        let folder = try temporaryFolder(self)
        let store = try ImportFixtures.store(Fixtures.worldCupModel(), in: folder)
        let file = try ImportFixtures.write("qualifyingZone,teamName\nEurope,France\n", to: "teams.csv", in: folder)
        _ = try ObjectImporter(store: store, entityName: "Team", file: file).run()
        XCTAssertEqual(try ImportFixtures.rows(store, "Team", ["teamName", "qualifyingZone", "imageName", "wins"]),
                       [[.string("France"), .string("Europe"), .null, .integer(0)]])
    }

    func testAnEmptyFileOrAHeaderAloneImportsNothingAndFinishes() throws {
        for (text, nextLine) in [("", 1), ("name,count\n", 2)] {
            let (store, result) = try importSamples(text)
            XCTAssertEqual(result.outcome, .finished)
            XCTAssertEqual(result.recordsImported, 0)
            XCTAssertEqual(result.nextLine, nextLine)
            XCTAssertEqual(try ImportFixtures.rows(store, "Sample", ["name"]), [])
        }
    }

    func testAFileFilledOrGrownAfterItsImportFinishedImportsTheNewRecords() throws {
        let folder = try temporaryFolder(self)
        let store = try ImportFixtures.store(ImportFixtures.samplesModel(), in: folder)
        let file = folder.appendingPathComponent("samples.csv")
        func importFile() throws -> ImportResult { try ObjectImporter(store: store, entityName: "Sample", file: file).run() }
        try Data().write(to: file)
        XCTAssertEqual(try importFile().outcome, .finished, "an empty file imports nothing")
        try Data("name,count\na,1\n".utf8).write(to: file)
        XCTAssertEqual(try importFile().recordsImported, 1, "filled later, it imports (it was finished forever)")
        try Data("name,count\na,1\nb,2\n".utf8).write(to: file)
        XCTAssertEqual(try importFile().recordsImported, 1, "grown, only the new record")
        XCTAssertThrowsError(try importFile(), "unchanged: already imported") { error in
            XCTAssertEqual((error as? ImportError)?.kind, .alreadyImported)
        }
        XCTAssertEqual(try ImportFixtures.rows(store, "Sample", ["name"]), [[.string("a")], [.string("b")]])
    }
}
