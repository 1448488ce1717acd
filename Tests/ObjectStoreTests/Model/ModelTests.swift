import Foundation
import ObjectStore
import XCTest

final class ModelTests: XCTestCase {
    private func assertModelError(
        _ entities: [EntityDescription], mentions parts: [String], file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try Model(entities: entities), file: file, line: line) { error in
            let text = "\(error)"
            XCTAssertTrue(error is ModelError, "\(error)", file: file, line: line)
            for part in parts { XCTAssertTrue(text.contains(part), "'\(text)' should mention '\(part)'", file: file, line: line) }
        }
    }

    func testValidModelsLoad() throws {
        XCTAssertNoThrow(try Fixtures.worldCupModel())
        XCTAssertNoThrow(try Fixtures.banksModel())
        XCTAssertNoThrow(try Fixtures.todoModel())
    }

    func testDuplicateEntityAndPropertyNamesAreRefused() {
        assertModelError([EntityDescription(name: "Team"), EntityDescription(name: "team")], mentions: ["team", "duplicate entity"])
        assertModelError([EntityDescription(name: "Team", attributes: [
            AttributeDescription(name: "wins", type: .integer), AttributeDescription(name: "Wins", type: .string),
        ])], mentions: ["Team.Wins", "duplicate property"])
    }

    func testRelationshipsNeedAnExistingDestinationAndAMatchingInverse() {
        assertModelError([EntityDescription(name: "Bank", relationships: [
            RelationshipDescription(name: "details", destinationEntity: "Details", inverseName: "bank"),
        ])], mentions: ["Bank.details", "'Details' does not exist"])
        assertModelError([
            EntityDescription(name: "Bank", relationships: [
                RelationshipDescription(name: "details", destinationEntity: "Details", inverseName: "bank"),
            ]),
            EntityDescription(name: "Details"),
        ], mentions: ["Bank.details", "missing inverse", "Details has no relationship 'bank'"])
        assertModelError([
            EntityDescription(name: "A", relationships: [
                RelationshipDescription(name: "b", destinationEntity: "B", inverseName: "a", isToMany: true),
            ]),
            EntityDescription(name: "B", relationships: [
                RelationshipDescription(name: "a", destinationEntity: "A", inverseName: "b", isToMany: true),
            ]),
        ], mentions: ["A.b", "many-to-many"])
    }

    func testBadNamesDefaultsAndIndexesAreRefused() {
        assertModelError([EntityDescription(name: "Team", attributes: [AttributeDescription(name: "Z_PK", type: .integer)])],
                         mentions: ["Team.Z_PK", "reserved"])
        assertModelError([EntityDescription(name: "my team")], mentions: ["my team", "invalid entity name"])
        assertModelError([EntityDescription(name: "Team", attributes: [
            AttributeDescription(name: "wins", type: .integer, defaultValue: .string("none")),
        ])], mentions: ["Team.wins", "default value", "integer"])
        assertModelError([EntityDescription(name: "Team", attributes: [AttributeDescription(name: "wins", type: .integer)],
                                            indexes: [IndexDescription(properties: ["loses"])])],
                         mentions: ["Team index", "unknown property 'loses'"])
    }

    func testJSONModelRoundTripsAndKeepsItsFingerprint() throws {
        let model = try Fixtures.todoModel()
        let reloaded = try Model(json: model.jsonData())
        XCTAssertEqual(reloaded.jsonData(), model.jsonData())
        XCTAssertEqual(reloaded.fingerprint, model.fingerprint)
        XCTAssertNotEqual(try Fixtures.worldCupModel().fingerprint, model.fingerprint)
    }

    func testJSONModelFileWithEveryKindOfProperty() throws {
        let json = """
        {"entities": [
          {"name": "Bank", "attributes": [
              {"name": "name", "type": "string", "minLength": 1},
              {"name": "assets", "type": "double", "optional": true},
              {"name": "insured", "type": "bool", "default": true},
              {"name": "founded", "type": "date", "default": "1900-01-01"},
              {"name": "logo", "type": "binary", "optional": true, "default": "AAE="},
              {"name": "branches", "type": "integer", "default": 1, "minValue": 0}],
           "relationships": [{"name": "details", "destination": "Details", "inverse": "bank", "deleteRule": "cascade"}],
           "indexes": [["name"], {"name": "by_assets", "properties": ["-assets", "name"]}]},
          {"name": "Details", "attributes": [{"name": "closeDate", "type": "date"}],
           "relationships": [{"name": "bank", "destination": "Bank", "inverse": "details"}]}
        ]}
        """
        let model = try Model(json: Data(json.utf8))
        let bank = try XCTUnwrap(model.entity(named: "Bank"))
        XCTAssertEqual(bank.attribute(named: "insured")?.defaultValue, .bool(true))
        XCTAssertEqual(bank.attribute(named: "founded")?.defaultValue, .date(Date(timeIntervalSince1970: -2_208_988_800)))
        XCTAssertEqual(bank.attribute(named: "logo")?.defaultValue, .binary(Data([0, 1])))
        XCTAssertEqual(bank.attribute(named: "branches")?.minValue, .integer(0))
        XCTAssertEqual(bank.relationship(named: "details")?.deleteRule, .cascade)
        XCTAssertEqual(bank.indexes.last?.elements, [.init("assets", ascending: false), .init("name")])
        XCTAssertTrue(model.storesForeignKey(bank.relationship(named: "details")!, of: bank))
    }

    func testJSONErrorsNameTheFileAndThePlace() {
        func assertJSONError(_ json: String, mentions parts: [String], line: UInt = #line) {
            XCTAssertThrowsError(try Model(json: Data(json.utf8), source: "model.json"), line: line) { error in
                let text = "\(error)"
                for part in ["model.json"] + parts {
                    XCTAssertTrue(text.contains(part), "'\(text)' should mention '\(part)'", line: line)
                }
            }
        }
        assertJSONError(#"{"entities": [ {"name": "Team",, } ]}"#, mentions: ["not valid JSON"])
        assertJSONError(#"{"entities": [{"name": "Team", "attributes": [{"name": "wins", "type": "int"}]}]}"#,
                        mentions: ["entities[0] (Team).attributes[0] (wins).type", "unknown type \"int\"", "integer"])
        assertJSONError(#"{"entities": [{"name": "Team", "attributes": [{"name": "wins", "type": "integer", "default": "x"}]}]}"#,
                        mentions: ["(wins).default", "not an integer"])
        assertJSONError(#"{"entities": [{"name": "Team", "atributes": []}]}"#, mentions: ["(Team)", "unknown key \"atributes\""])
        assertJSONError(#"{"entities": [{"attributes": []}]}"#, mentions: ["entities[0]", "missing \"name\""])
        assertJSONError(#"{"entities": [{"name": "Team", "relationships": [{"name": "zone", "destination": "Zone", "inverse": "teams"}]}]}"#,
                        mentions: ["Team.zone", "'Zone' does not exist"])
    }

    func testTheShippedWorldCupModelLoads() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../data/worldcup/model.json").standardized
        let model = try Model(contentsOf: url)
        XCTAssertEqual(model.entity(named: "Team")?.attribute(named: "wins")?.type, .integer)
    }
}
