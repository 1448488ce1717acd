import Foundation
import ObjectStore
import PostgresNIO
@testable import Sharing
import TestSupport
import XCTest

/// A base is kept in the store as the JSON `RowImage.json` writes by hand, and read back
/// like a row image from the server by a hand-written reader: every value must come back
/// as it went, however odd its text or number, and what is not a row must be refused.
final class RowImageTests: XCTestCase {
    func testGeneratedValuesComeBackFromTheirJSONAsTheyWent() throws {
        let seed = SeededGenerator.seed()
        print("RowImageTests seed \(seed) (SEED=\(seed) replays it)")
        var random = SeededGenerator(seed: seed)
        let card = try XCTUnwrap(BoardModel.model.entity(named: "Card"))
        for round in 0..<2_000 {
            let values: [String: Value] = [
                "title": .string(Self.text(&random)),
                "count": .integer(Self.integer(&random)),
                "score": Self.double(&random),
                "done": .bool(Bool.random(using: &random)),
                "due": Bool.random(using: &random) ? .null : .date(Date(timeIntervalSinceReferenceDate: Double(Int32.random(in: .min ... .max, using: &random)) / 7)),
                "photo": .binary(Data((0..<Int.random(in: 0...8, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })),
                "board": Bool.random(using: &random) ? .null : .string(UUID().uuidString.lowercased()),
            ]
            let json = RowImage.json(values)
            // What Foundation's decoder reads from it, too: the text is JSON.
            XCTAssertNoThrow(try JSONDecoder().decode([String: JSONScalar].self, from: Data(json.utf8)), json)
            let read = try RowImage.values(ofJSON: json, entity: card, model: BoardModel.model)
            for (key, value) in values {
                if case .double(let d) = value, d.isNaN {
                    guard case .double(let back)? = read[key], back.isNaN else { return XCTFail("round \(round): \(key) NaN came back as \(String(describing: read[key])) from \(json)") }
                    continue
                }
                XCTAssertEqual(read[key], value, "round \(round): \(key) from \(json)")
            }
        }
    }

    /// The hand-written reader reads what `JSONDecoder` reads (escapes of every kind,
    /// surrogate pairs, space between tokens, numbers of each form) and refuses what is not
    /// a JSON object of scalars.
    func testTheReaderAgreesWithJSONDecoderAndRefusesWhatIsNotAnObjectOfScalars() throws {
        let texts = [
            #"{}"#, #" { "a" : 1 , "b":-2.5e3,"c":null,"d":true,"e":false } "#,
            #"{"s":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t"}"#, #"{"big":123456789012345678901234567890}"#,
            #"{"min":-9223372036854775808,"max":9223372036854775807,"z":0,"f":0.1,"n":-0}"#,
            #"{"x":"\\x00ff","é":"ü"}"#, #"{"k":1,"k":2}"#,
        ]
        for text in texts {
            let expected = try JSONDecoder().decode([String: JSONScalar].self, from: Data(text.utf8))
            let fields = try JSONScalar.fields(fromJSON: text)
            XCTAssertEqual(Set(fields.map(\.key)), Set(expected.keys), text)
            for (key, value) in expected {
                XCTAssertEqual(JSONScalar.field(key, in: fields)?.description, value.description, "\(key) of \(text)")
            }
        }
        // A row's repeated column reads as its first, as `JSONDecoder` reads it, among a few
        // columns and among many (columns of a newer model, which are left out).
        let card = try XCTUnwrap(BoardModel.model.entity(named: "Card"))
        for extra in [0, 40] {
            let text = "{" + (0..<extra).map { #""newer\#($0)":\#($0),"# }.joined() + #""title":"first","count":2,"title":"second"}"#
            let values = try RowImage.values(ofJSON: text, entity: card, model: BoardModel.model)
            XCTAssertEqual(values, ["title": .string("first"), "count": .integer(2)], text)
        }
        let refused = [#""#, #"[]"#, #"{"a":1,}"#, #"{"a":{"b":1}}"#, #"{"a":[1]}"#, #"{"a":"x"#, "{\"a\":\"\u{1}\"}", #"{"a":tru}"#,
                       #"{"a":1} x"#, #"{a:1}"#, #"{"a":"\q"}"#, #"{"a":"\ud83d"}"#, #"{"a":.5}"#, #"{"a":1e999}"#]
        for text in refused {
            XCTAssertThrowsError(try JSONScalar.fields(fromJSON: text), text)
            XCTAssertThrowsError(try RowImage.values(ofJSON: text, entity: card, model: BoardModel.model), text) { error in
                XCTAssertTrue("\(error)".contains("is not a JSON object of scalars"), "\(text): \(error)")
            }
        }
    }

    /// A push's inserts read back the rows they made as typed columns, not as row images
    /// (`ServerWriter`), and so does a join's snapshot: each row must come back as the
    /// server's row image of it reads, for every type, odd text and numbers, and no value,
    /// so that a row the server holds as sent is recognised, and its base is what a pull of
    /// the same row would leave.
    func testInsertedRowsComeBackAsTheServersRowImagesOfThemRead() async throws {
        let seed = SeededGenerator.seed()
        print("RowImageTests seed \(seed) (SEED=\(seed) replays it)")
        var random = SeededGenerator(seed: seed)
        let model = BoardModel.model
        let board = try XCTUnwrap(model.entity(named: "Board")), card = try XCTUnwrap(model.entity(named: "Card"))
        let boardID = UUID()
        var operations = [Outbox.Operation(entity: board, id: boardID, kind: .insert, values: ["name": .string("Board")], changedKeys: ["name"])]
        for _ in 0..<600 {
            var values: [String: Value] = [
                // PostgreSQL's text holds no NUL character.
                "title": .string(Self.text(&random).replacingOccurrences(of: "\u{0}", with: "0")),
                "count": .integer(Self.integer(&random)),
                "score": Self.double(&random),
                "done": .bool(Bool.random(using: &random)),
                "due": Bool.random(using: &random) ? .null : .date(Date(timeIntervalSinceReferenceDate: Double(Int32.random(in: .min ... .max, using: &random)) / 7)),
                "photo": Bool.random(using: &random) ? .null : .binary(Data((0..<Int.random(in: 0...8, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })),
                "board": Bool.random(using: &random) ? .null : .string(boardID.uuidString.lowercased()),
            ]
            if Bool.random(using: &random) { values["title"] = .null }
            operations.append(Outbox.Operation(entity: card, id: UUID(), kind: .insert, values: values, changedKeys: values.keys.sorted()))
        }
        let writer = ServerWriter(model: model, policy: .error, logger: ServerTestDatabase.logger)
        try await ServerTestDatabase.with { database in
            try await database.withConnection { connection in
                try await ServerSchema(model: model).create(on: connection, logger: ServerTestDatabase.logger)
                let (written, _) = try await connection.withTransaction(logger: ServerTestDatabase.logger) { try await writer.push(operations, on: $0) }
                XCTAssertEqual(written.count, operations.count)
                let returned = Dictionary(uniqueKeysWithValues: written.map { ($0.id, $0) })
                let sent = Dictionary(uniqueKeysWithValues: operations.map { ($0.id, $0.values) })
                // The row images the change log holds of the inserts: what a pull reads.
                let rows = try await connection.query(#"SELECT object, version, "row"::text FROM "Z_CHANGES" WHERE entity = 'Card'"#,
                                                      logger: ServerTestDatabase.logger)
                var compared = 0
                for try await (id, version, json) in rows.decode((UUID, Int64, String).self) {
                    let image = try RowImage.values(ofJSON: json, entity: card, model: model)
                    let row = try XCTUnwrap(returned[id])
                    XCTAssertEqual(row.version, version)
                    XCTAssertEqual(Set(row.values?.keys ?? [:].keys), Set(image.keys), json)
                    for (key, value) in image {
                        if case .double(let d) = value, d.isNaN {
                            guard case .double(let back)? = row.values?[key], back.isNaN else { return XCTFail("\(key): NaN came back as \(String(describing: row.values?[key])) (\(json))") }
                            continue
                        }
                        XCTAssertEqual(row.values?[key], value, "\(key) of \(json)")
                    }
                    // And as sent, but for NaN (which equals nothing): taken by its base alone.
                    if !json.contains("NaN") { XCTAssertEqual(row.values, sent[id], json) }
                    compared += 1
                }
                XCTAssertEqual(compared, 600)

                // A join's snapshot reads the tables as columns too: the same values, and
                // the board named as the cards' destination.
                var snapshot: [UUID: ServerChange] = [:]
                _ = try await ServerChangeLog(model: model).snapshot(on: connection, pageSize: 97, logger: ServerTestDatabase.logger) { changes, _ in
                    for change in changes { snapshot[change.object] = change }
                }
                XCTAssertEqual(snapshot.count, operations.count)
                for (id, row) in returned {
                    let change = try XCTUnwrap(snapshot[id])
                    XCTAssertNil(change.problem)
                    XCTAssertEqual(change.version, row.version)
                    XCTAssertEqual(Set(change.values.keys), Set(row.values?.keys ?? [:].keys))
                    for (key, value) in row.values ?? [:] {
                        if case .double(let d) = value, d.isNaN, case .double(let back)? = change.values[key], back.isNaN { continue }
                        XCTAssertEqual(change.values[key], value, "\(key) of \(id) in the snapshot")
                    }
                }
            }
        }
    }

    /// Text with what JSON must escape: quotes, backslashes, control characters, and
    /// letters beyond ASCII.
    private static func text(_ random: inout SeededGenerator) -> String {
        let pieces = ["a", "Ω", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1}", "\u{1F}", "\u{7F}", "😀", "é", "/", " ", "\u{2028}"]
        return String((0..<Int.random(in: 0...12, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined())
    }

    private static func integer(_ random: inout SeededGenerator) -> Int64 {
        [Int64.min, .max, 0, -1, Int64.random(in: .min ... .max, using: &random)].randomElement(using: &random)!
    }

    private static func double(_ random: inout SeededGenerator) -> Value {
        let pick: [Double] = [.nan, .infinity, -.infinity, 0, -0.0, 1e-300, 1.7976931348623157e308, 5e-324, 0.1, 1e16,
                              Double(bitPattern: random.next())]
        let value = pick.randomElement(using: &random)!
        return Bool.random(using: &random) ? .null : .double(value)
    }
}
