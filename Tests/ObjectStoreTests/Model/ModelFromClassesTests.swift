import Foundation
import ObjectStore
import XCTest

final class ModelFromClassesTests: XCTestCase {
    final class Folder: ManagedObject {
        @Attribute(minLength: 1, maxLength: 40) var name: String
        @Attribute(default: 0, minValue: 0, maxValue: 1_000) var position: Int
        @Attribute var createdOn: Date?
        @Relationship(inverse: "folder", deleteRule: .cascade) var notes: Set<Note>
        @Relationship(inverse: "parent") var subfolders: [Folder]
        @Relationship var parent: Folder?

        override class var entityIndexes: [IndexDescription] { [IndexDescription(properties: ["name", "-position"])] }
    }

    final class Note: ManagedObject {
        @Attribute(minLength: 1) var title: String
        @Attribute("body") var text: String?
        @Attribute(default: false) var pinned: Bool
        @Attribute(minValue: 0.0, maxValue: 5.0) var rating: Double?
        @Attribute(maxLength: 1_024) var thumbnail: Data?
        @Attribute(default: 1) var revision: Int64
        @Relationship var folder: Folder?
        @Relationship(inverse: "note", deleteRule: .deny) var cover: NoteCover?
    }

    /// A class whose entity is named otherwise, in a one-to-one pair.
    final class NoteCover: ManagedObject {
        @Attribute var caption: String
        @Relationship(inverse: "cover", isOptional: false) var note: Note?

        override class var entityName: String { "Cover" }
    }

    /// The same model as `Model(classes: [Folder.self, Note.self, NoteCover.self])`, written out.
    static func handWrittenModel() throws -> Model {
        try Model(entities: [
            EntityDescription(
                name: "Folder",
                attributes: [
                    AttributeDescription(name: "name", type: .string, minLength: 1, maxLength: 40),
                    AttributeDescription(name: "position", type: .integer, defaultValue: .integer(0),
                                         minValue: .integer(0), maxValue: .integer(1_000)),
                    AttributeDescription(name: "createdOn", type: .date, isOptional: true),
                ],
                relationships: [
                    RelationshipDescription(name: "notes", destinationEntity: "Note", inverseName: "folder", isToMany: true, deleteRule: .cascade),
                    RelationshipDescription(name: "subfolders", destinationEntity: "Folder", inverseName: "parent", isToMany: true),
                    RelationshipDescription(name: "parent", destinationEntity: "Folder", inverseName: "subfolders"),
                ],
                indexes: [IndexDescription(properties: ["name", "-position"])],
                objectClass: Folder.self),
            EntityDescription(
                name: "Note",
                attributes: [
                    AttributeDescription(name: "title", type: .string, minLength: 1),
                    AttributeDescription(name: "body", type: .string, isOptional: true),
                    AttributeDescription(name: "pinned", type: .bool, defaultValue: .bool(false)),
                    AttributeDescription(name: "rating", type: .double, isOptional: true, minValue: .double(0), maxValue: .double(5)),
                    AttributeDescription(name: "thumbnail", type: .binary, isOptional: true, maxLength: 1_024),
                    AttributeDescription(name: "revision", type: .integer, defaultValue: .integer(1)),
                ],
                relationships: [
                    RelationshipDescription(name: "folder", destinationEntity: "Folder", inverseName: "notes"),
                    RelationshipDescription(name: "cover", destinationEntity: "Cover", inverseName: "note", deleteRule: .deny),
                ],
                objectClass: Note.self),
            EntityDescription(
                name: "Cover",
                attributes: [AttributeDescription(name: "caption", type: .string)],
                relationships: [
                    RelationshipDescription(name: "note", destinationEntity: "Note", inverseName: "cover", isOptional: false),
                ],
                objectClass: NoteCover.self),
        ])
    }

    static func derivedModel() throws -> Model {
        try Model(classes: [Folder.self, Note.self, NoteCover.self])
    }

    func testAModelFromClassesEqualsTheHandWrittenOne() throws {
        let derived = try Self.derivedModel()
        let written = try Self.handWrittenModel()
        XCTAssertEqual(derived.entities.map(\.name), written.entities.map(\.name))
        for (mine, theirs) in zip(derived.entities, written.entities) {
            XCTAssertEqual(mine.attributes, theirs.attributes, mine.name)
            XCTAssertEqual(mine.relationships, theirs.relationships, mine.name)
            XCTAssertEqual(mine.indexes, theirs.indexes, mine.name)
            XCTAssertTrue(mine.objectClass == theirs.objectClass, mine.name)
        }
        XCTAssertEqual(derived.fingerprint, written.fingerprint)
    }

    /// The classes of Docs/ModelFormat.md's "Models from Swift classes", as written there.
    final class Zone: ManagedObject {
        @Attribute(minLength: 1) var name: String
        @Relationship(inverse: "zone", deleteRule: .deny) var teams: Set<Team>

        override class var entityIndexes: [IndexDescription] { [IndexDescription(properties: ["name"])] }
    }

    final class Team: ManagedObject {
        @Attribute(minLength: 1, maxLength: 60) var teamName: String
        @Attribute var imageName: String?
        @Attribute(default: 0, minValue: 0, merge: .add) var wins: Int
        @Attribute(minValue: Date(timeIntervalSince1970: 1_308_096_000)) var qualifiedOn: Date?   // 2011-06-15
        @Relationship(isOptional: false) var zone: Zone?

        override class var entityIndexes: [IndexDescription] {
            [IndexDescription(name: "Team_byZoneAndWins", properties: ["zone", "-wins", "teamName"])]
        }
    }

    func testTheModelFormatExampleFromClassesEqualsItsJSON() throws {
        let document = try String(contentsOf: URL(fileURLWithPath: #filePath)
            .appendingPathComponent("../../../../Docs/ModelFormat.md").standardized, encoding: .utf8)
        let example = try XCTUnwrap(document.range(of: "\n## Example\n"), "Docs/ModelFormat.md has an Example section")
        let start = try XCTUnwrap(document.range(of: "```json\n", range: example.upperBound..<document.endIndex))
        let end = try XCTUnwrap(document.range(of: "\n```", range: start.upperBound..<document.endIndex))
        let fromJSON = try Model(json: Data(document[start.upperBound..<end.lowerBound].utf8))
        let fromClasses = try Model(classes: [Zone.self, Team.self])
        XCTAssertEqual(String(decoding: fromClasses.jsonData(), as: UTF8.self), String(decoding: fromJSON.jsonData(), as: UTF8.self))
    }

    func testObjectsOfADerivedModelSaveAndFetchFromAFile() throws {
        let store = try Fixtures.store(try Self.derivedModel(), self)
        let context = ObjectContext(store: store)
        let folder = try context.insert(Folder.self)
        folder.name = "Home"
        let note = try context.insert(Note.self)
        note.title = "Buy milk"
        note.text = "semi-skimmed"
        note.folder = folder
        let cover = try context.insert(NoteCover.self)
        cover.caption = "A bottle"
        cover.note = note
        XCTAssertEqual(folder.position, 0, "the declared default")
        XCTAssertEqual(note.revision, 1, "the declared default")
        XCTAssertTrue(note.cover === cover, "the one-to-one inverse follows")
        try context.save()

        let other = ObjectContext(store: store)
        let folders = try other.fetch(FetchRequest<Folder>(sortDescriptors: [FetchSortDescriptor(key: "name")]))
        XCTAssertEqual(folders.map(\.name), ["Home"])
        let fetched = try XCTUnwrap(folders.first?.notes.first)
        XCTAssertEqual(fetched.title, "Buy milk")
        XCTAssertEqual(fetched.text, "semi-skimmed")
        XCTAssertEqual(try fetched.value(forKey: "body") as? String, "semi-skimmed", "a renamed attribute is stored under its key")
        XCTAssertEqual(fetched.cover?.caption, "A bottle")
        XCTAssertEqual(try other.fetch(FetchRequest<NoteCover>()).count, 1, "fetched by the overridden entity name")

        let untitled = try other.insert(Note.self)
        untitled.title = ""
        XCTAssertThrowsError(try other.save(), "the declared minLength is checked") { error in
            XCTAssertTrue(error is ValidationError, "\(error)")
            XCTAssertTrue("\(error)".contains("title"), "\(error)")
        }
        other.rollback()
        let lonelyCover = try other.insert(NoteCover.self)
        lonelyCover.caption = "No note"
        XCTAssertThrowsError(try other.save(), "the declared isOptional: false is checked") { error in
            XCTAssertTrue("\(error)".contains("note"), "\(error)")
        }
    }

    func testASetToManyReadsAndWritesThroughTheWrapperAndItsInverseFollows() throws {
        let store = try Fixtures.store(try Self.derivedModel(), self)
        let context = ObjectContext(store: store)
        let home = try context.insert(Folder.self)
        home.name = "Home"
        let work = try context.insert(Folder.self)
        work.name = "Work"
        let milk = try context.insert(Note.self)
        milk.title = "Buy milk"
        let tap = try context.insert(Note.self)
        tap.title = "Fix the tap"

        home.notes = [milk, tap]
        XCTAssertEqual(home.notes, [milk, tap])
        XCTAssertTrue(milk.folder === home && tap.folder === home)
        home.notes.remove(milk)
        XCTAssertNil(milk.folder, "a member that leaves the set loses its inverse")
        work.notes.insert(milk)
        XCTAssertTrue(milk.folder === work)
        try home.setValue(Set([milk, tap]), forKey: "notes")
        XCTAssertEqual(work.notes, [], "a set given by key moves its members too")
        XCTAssertEqual(home.notes, [milk, tap])
        try context.save()

        let other = ObjectContext(store: store)
        let folders = try other.fetch(FetchRequest<Folder>(sortDescriptors: [FetchSortDescriptor(key: "name")]))
        XCTAssertEqual(folders.map { Set($0.notes.map(\.title)) }, [["Buy milk", "Fix the tap"], []])
        folders[1].notes = folders[0].notes.filter { $0.title == "Fix the tap" }
        try other.save()
        XCTAssertEqual(try other.fetch(FetchRequest<Note>(sortDescriptors: [FetchSortDescriptor(key: "title")])).map { $0.folder?.name },
                       ["Home", "Work"])
    }

    func testAnArrayToManyIsInKeyOrder() throws {
        let context = ObjectContext(store: try Fixtures.store(try Self.derivedModel(), self))
        let root = try context.insert(Folder.self)
        root.name = "Root"
        let children = try (1...3).map { number -> Folder in
            let child = try context.insert(Folder.self)
            child.name = "Child \(number)"
            return child
        }
        root.subfolders = children.reversed()
        XCTAssertEqual(root.subfolders.map(\.name), ["Child 1", "Child 2", "Child 3"], "insertion order, not the order assigned")
        try context.save()
        XCTAssertEqual(root.subfolders.map(\.name), ["Child 1", "Child 2", "Child 3"], "primary key order")
        XCTAssertTrue(children.allSatisfy { $0.parent === root })
    }

    func testTheRenamedKeyInitializerStillWorksWithAHandWrittenModel() throws {
        let context = ObjectContext(store: try Fixtures.store(try Self.handWrittenModel(), self))
        let note = try context.insert(Note.self)
        note.text = "by key"
        XCTAssertEqual(try note.value(forKey: "body") as? String, "by key")
    }

    // MARK: Errors

    private func assertModelError(
        _ classes: [ManagedObject.Type], at location: String, mentions parts: [String],
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try Model(classes: classes), file: file, line: line) { error in
            guard let error = error as? ModelError else { return XCTFail("\(error) is no ModelError", file: file, line: line) }
            XCTAssertEqual(error.location, location, "\(error)", file: file, line: line)
            for part in parts {
                XCTAssertTrue(error.reason.contains(part), "'\(error)' should mention '\(part)'", file: file, line: line)
            }
        }
    }

    func testADestinationClassMissingFromTheListIsAnError() {
        assertModelError([Note.self, NoteCover.self], at: "Note.folder", mentions: ["Folder", "not in Model(classes:)", "add Folder.self"])
    }

    final class Owner: ManagedObject {
        @Relationship(inverse: "master") var pets: [Pet]
    }

    final class Pet: ManagedObject {
        @Attribute var master: String
        @Relationship var owner: Owner?
    }

    final class Kennel: ManagedObject {
        @Relationship(inverse: "keeper") var dogs: [Dog]
    }

    final class Dog: ManagedObject {
        @Relationship var owner: Owner?
    }

    func testAnInverseThatIsMissingOrNoRelationshipIsAnError() {
        assertModelError([Kennel.self, Dog.self], at: "Kennel.dogs", mentions: ["inverse 'keeper'", "Dog has no such property", "Dog has no relationship back to Kennel"])
        assertModelError([Owner.self, Pet.self], at: "Owner.pets", mentions: ["Pet.master is an attribute", "Pet's relationships back to Owner: owner"])
    }

    final class Shelf: ManagedObject {
        @Relationship(inverse: "folder") var notes: [Note]
    }

    final class Left: ManagedObject {
        @Relationship(inverse: "left") var rights: [Right]
    }

    final class Right: ManagedObject {
        @Relationship(inverse: "others") var left: Left?
    }

    func testAnInverseThatDoesNotPointBackIsAnError() {
        assertModelError([Shelf.self, Folder.self, Note.self, NoteCover.self], at: "Shelf.notes",
                         mentions: ["inverse Note.folder does not point back: it holds Folder?, not Shelf objects"])
        assertModelError([Left.self, Right.self], at: "Left.rights",
                         mentions: ["Right.left names 'others' as its own inverse", "name each other"])
    }

    final class Lonely: ManagedObject {
        @Relationship var buddy: Buddy?
    }

    final class Buddy: ManagedObject {
        @Relationship var lonelies: [Lonely]
    }

    final class Hub: ManagedObject {
        @Relationship var spoke: Spoke?
    }

    final class Spoke: ManagedObject {
        @Relationship(inverse: "spoke") var hubs: [Hub]
        @Relationship(inverse: "spoke") var otherHubs: [Hub]
    }

    func testAPairWithNoInverseNamedOrTwoClaimsIsAnError() {
        assertModelError([Lonely.self, Buddy.self], at: "Lonely.buddy",
                         mentions: ["no inverse", "@Relationship(inverse: \"lonelies\") here, or @Relationship(inverse: \"buddy\") on Buddy.lonelies"])
        assertModelError([Hub.self, Spoke.self], at: "Hub.spoke", mentions: ["Spoke.hubs and Spoke.otherHubs each name it"])
    }

    struct Celsius: AttributeValue {
        var degrees: Double
        var attributeValue: Value { .double(degrees) }
        init(attributeValue: Value) { degrees = Double(attributeValue: attributeValue) }
    }

    struct Bag: RelationshipValue {
        init(relatedObjects: [ManagedObject]) {}
        var relationshipValue: Any? { nil }
    }

    final class Thermometer: ManagedObject {
        @Attribute var reading: Celsius
    }

    final class Drawer: ManagedObject {
        @Relationship var contents: Bag
    }

    func testAPropertyTypeThatDescribesNothingIsAnError() {
        assertModelError([Thermometer.self], at: "Thermometer.reading", mentions: ["Celsius", "static var attributeType"])
        assertModelError([Drawer.self], at: "Drawer.contents", mentions: ["Bag", "Set<Destination>"])
    }

    final class OtherFolder: ManagedObject {
        override class var entityName: String { "folder" }
    }

    func testTwoClassesOfOneEntityNameAreAnError() {
        assertModelError([Folder.self, Note.self, NoteCover.self, OtherFolder.self], at: "OtherFolder",
                         mentions: ["'folder'", "Folder's 'Folder'", "override `class var entityName`"])
        assertModelError([Folder.self, Note.self, NoteCover.self, Folder.self], at: "Folder", mentions: ["listed twice"])
    }

    final class Stadium: ManagedObject {
        @Attribute("seats", minLength: 1) var capacity: Int
    }

    func testValidationErrorsNameTheClassAndTheSwiftProperty() {
        assertModelError([Stadium.self], at: "Stadium.capacity", mentions: ["minLength/maxLength apply to string and binary attributes only"])
    }
}
