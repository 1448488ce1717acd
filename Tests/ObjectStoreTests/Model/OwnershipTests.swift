import Foundation
@testable import ObjectStore
import XCTest

/// An entity's ``Ownership``: read from JSON (the to-do dataset's model), written back, and
/// refused with a message that names what to fix.
final class OwnershipTests: XCTestCase {
    private static let todoModelFile = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("data/todo/model.json")

    func testTheToDoModelOwnsListsAndItsItemsFollowTheirList() throws {
        let model = try Model(contentsOf: Self.todoModelFile)
        XCTAssertEqual(model.entity(named: "List")?.ownership, .owner(attribute: "owner", sharedAttribute: "shared"))
        XCTAssertEqual(model.entity(named: "Item")?.ownership, .inherited(through: "list"))
        let reloaded = try Model(json: model.jsonData())
        XCTAssertEqual(reloaded.entity(named: "List")?.ownership, .owner(attribute: "owner", sharedAttribute: "shared"))
        XCTAssertEqual(reloaded.entity(named: "Item")?.ownership, .inherited(through: "list"))
        XCTAssertEqual(reloaded.jsonData(), model.jsonData())
    }

    func testOwnershipThatNamesTheWrongPropertiesIsRefusedWithWhatToFix() throws {
        let list = { (ownership: Ownership?, owner: AttributeDescription) in
            EntityDescription(name: "List", attributes: [AttributeDescription(name: "title", type: .string), owner,
                                                         AttributeDescription(name: "shared", type: .bool, defaultValue: .bool(false))],
                              relationships: [RelationshipDescription(name: "items", destinationEntity: "Item", inverseName: "list", isToMany: true)],
                              ownership: ownership)
        }
        let item = { (ownership: Ownership?) in
            EntityDescription(name: "Item", attributes: [AttributeDescription(name: "name", type: .string)],
                              relationships: [RelationshipDescription(name: "list", destinationEntity: "List", inverseName: "items")],
                              ownership: ownership)
        }
        let optionalOwner = AttributeDescription(name: "owner", type: .string, isOptional: true)
        let owned = Ownership.owner(attribute: "owner", sharedAttribute: "shared")
        XCTAssertNoThrow(try Model(entities: [list(owned, optionalOwner), item(.inherited(through: "list"))]))
        let cases: [([EntityDescription], [String])] = [
            ([list(owned, AttributeDescription(name: "owner", type: .string)), item(nil)], ["List ownership", "'owner' must be an optional string attribute"]),
            ([list(owned, AttributeDescription(name: "owner", type: .integer, isOptional: true)), item(nil)], ["optional string attribute"]),
            ([list(.owner(attribute: "owner", sharedAttribute: "title"), optionalOwner), item(nil)], ["shared attribute 'title' must be a bool"]),
            ([list(owned, optionalOwner), item(.inherited(through: "name"))], ["Item ownership", "'name' must be a to-one relationship"]),
            ([list(owned, optionalOwner), item(.inherited(through: "items"))], ["'items' must be a to-one relationship"]),
            ([list(nil, optionalOwner), item(.inherited(through: "list"))], ["List, which 'list' names, must have an owner attribute"]),
            ([list(.inherited(through: "items"), optionalOwner), item(nil)], ["'items' must be a to-one relationship"]),
        ]
        for (entities, parts) in cases {
            XCTAssertThrowsError(try Model(entities: entities)) { error in
                XCTAssertTrue(error is ModelError, "\(error)")
                for part in parts { XCTAssertTrue("\(error)".contains(part), "'\(error)' should mention '\(part)'") }
            }
        }
    }

    func testAJSONOwnershipWithUnknownOrMixedKeysNamesItsPlace() throws {
        for (ownership, part) in [(#"{"owner": "owner", "through": "list"}"#, "give either \"through\" or \"owner\""),
                                  (#"{"shared": "shared"}"#, "missing \"owner\""),
                                  (#"{"owners": "owner"}"#, "unknown key \"owners\"")] {
            let json = """
            {"entities": [{"name": "List", "attributes": [{"name": "owner", "type": "string", "optional": true}], "ownership": \(ownership)}]}
            """
            XCTAssertThrowsError(try Model(json: Data(json.utf8))) { error in
                XCTAssertTrue("\(error)".contains("entities[0] (List).ownership"), "\(error)")
                XCTAssertTrue("\(error)".contains(part), "'\(error)' should mention '\(part)'")
            }
        }
    }
}
