import ArgumentParser
import Datasets
import FetchedResults
import Foundation
import ObjectStore

/// `apply`: edits from standard input, one JSON object a line; after each save, the change
/// batch the dataset's controller delivered, as one JSON line.
struct Apply: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply edit operations (JSON lines on standard input) and print each save's change batch.",
        discussion: """
            Operations, one JSON object a line:
              {"op":"insert","entity":E,"values":{...}}
              {"op":"update","entity":E,"where":PREDICATE,"set":{...}}
              {"op":"update","entity":E,"where":PREDICATE,"add":{"wins":1}}
                                 adds to numbers: a counter ("merge": "add" in the
                                 model) saves the delta, so concurrent adds all count
              {"op":"delete","entity":E,"where":PREDICATE}
              {"op":"save"}
              {"op":"refresh"}   discards unsaved edits and loads what the store holds now
                                 (after a save refused for a conflict, apply the edits again)
            To-one relationships take an object ID ("List/2") or null. After each save:
              {"changes":[...],"sections":[{"name":N,"count":C},...]}
            Objects are named by their saved IDs; one shown before its first save (after a
            fetch in the same run) is renamed by {"kind":"object","type":"rename","id":T,"newID":P}.
            A bad line is reported on standard error with its number; nothing of it is applied.
            A line may have up to 64 MiB.
            A save that fails discards the changes since the last save, but for a store that
            another process kept locked (longer than --busy-timeout): those stay for the next save.
            """)

    @OptionGroup var options: DatasetOptions

    @OptionGroup var sharing: SharingOptions

    enum Policy: String, ExpressibleByArgument, CaseIterable {
        case error, storeWins = "store-wins", editWins = "edit-wins"
        var mergePolicy: MergePolicy { self == .error ? .error : self == .storeWins ? .storeWins : .editWins }
    }

    @Option(help: "What a save does with a field another process changed meanwhile: error (refuse), store-wins (keep theirs), edit-wins (overwrite). Sharing, what a field another desktop changed first keeps: error and store-wins keep theirs and record the conflict, edit-wins overwrites.")
    var mergePolicy: Policy = .error

    func run() throws {
        let (dataset, store) = try options.open(toWrite: "apply")
        let session = try sharing.start(store, mergePolicy: mergePolicy.mergePolicy)
        defer { session?.finishPushing() }
        let context = ObjectContext(store: store)
        context.mergePolicy = mergePolicy.mergePolicy
        let controller = try dataset.makeController(context: context)
        let recorder = Recorder()
        controller.delegate = recorder
        try controller.performFetch()
        var sectionsAtSave = controller.snapshot
        var lineNumber = 0
        var failures = 0
        for input in InputLines() {
            lineNumber += 1
            do {
                let line = try input.get()
                if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
                let operation = try Operation(line: line, model: dataset.model)
                if case .save = operation {
                    do {
                        try context.save()
                    } catch let error as StoreError where error.kind == .busy {
                        // The edits stay in the context: the next save writes them.
                        throw DatasetError("not saved: \(error.message.replacingOccurrences(of: "save again", with: "the next save writes them"))")
                    } catch let conflict as MergeConflictError {
                        context.rollback()
                        recorder.batches = []
                        throw DatasetError("\(conflict.summary). The changes since the last save were discarded: send {\"op\":\"refresh\"} to load what the store holds now and apply them again, or run apply with --merge-policy edit-wins (overwrite) or store-wins (keep theirs)")
                    } catch {
                        context.rollback()
                        recorder.batches = []
                        throw DatasetError("the save failed and the changes since the last save were discarded: \(error)")
                    }
                    let batch = recorder.batches.count == 1 ? recorder.batches[0]
                        : ChangeBatch.difference(from: sectionsAtSave, to: controller.snapshot, updated: recorder.updated)
                    recorder.batches = []
                    sectionsAtSave = controller.snapshot
                    printJSON(BatchJSON.line(batch, sections: sectionsAtSave))
                } else {
                    try operation.apply(to: context)
                }
            } catch let note as Operation.NothingMatched {
                FileHandle.standardError.write(Data("line \(lineNumber): \(note)\n".utf8))
            } catch {
                failures += 1
                FileHandle.standardError.write(Data("line \(lineNumber): \(error)\n".utf8))
            }
        }
        if context.hasChanges {
            let count = context.insertedObjects.count + context.updatedObjects.count + context.deletedObjects.count
            FileHandle.standardError.write(Data("the input ended with \(count) unsaved change\(count == 1 ? "" : "s") (after line \(lineNumber)), not saved; end the input with {\"op\":\"save\"}\n".utf8))
            failures += 1
        }
        if failures > 0 { throw ExitCode(1) }
    }

    final class Recorder: FetchedResultsControllerDelegate {
        var batches: [ChangeBatch] = [] {
            didSet { if batches.isEmpty { updated = [] } }
        }
        var updated: Set<ObjectID> = []

        func controller(_ controller: FetchedResultsController<ManagedObject>, didChangeContentWith batch: ChangeBatch) {
            batches.append(batch)
            updated.formUnion(batch.objectChanges.filter { $0.type == .update }.map(\.objectID))
        }
    }
}

/// One line of `apply`'s input, checked against the model before anything changes.
enum Operation {
    case insert(entity: EntityDescription, values: [String: Any?])
    case update(entity: EntityDescription, predicate: FetchPredicate, values: [String: Any?], adding: [String: Value])
    case delete(entity: EntityDescription, predicate: FetchPredicate)
    case save
    case refresh

    init(line: String, model: Model) throws {
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(line.utf8))
        } catch {
            // Foundation says what it could not read ("Number 1e400 is not representable").
            let reason = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String).map { " (\($0))" } ?? ""
            throw DatasetError("not valid JSON\(reason); write one operation per line, e.g. {\"op\":\"save\"}")
        }
        guard let json = parsed as? [String: Any] else {
            throw DatasetError("not a JSON object; write one operation per line, e.g. {\"op\":\"save\"}")
        }
        guard let op = json["op"] as? String else { throw DatasetError("missing \"op\" (insert, update, delete, save or refresh)") }
        func known(_ keys: Set<String>) throws {
            if let unknown = json.keys.sorted().first(where: { !keys.contains($0) }) {
                throw DatasetError("\"\(op)\" takes \(keys.sorted().joined(separator: ", ")), not \"\(unknown)\"")
            }
        }
        if op == "save" || op == "refresh" {
            try known(["op"])
            self = op == "save" ? .save : .refresh
            return
        }
        guard ["insert", "update", "delete"].contains(op) else {
            throw DatasetError("unknown op \"\(op)\"; use insert, update, delete, save or refresh")
        }
        guard let entityName = json["entity"] as? String else { throw DatasetError("missing \"entity\" (the entity of the objects to \(op))") }
        let entity = try model.existingEntity(named: entityName)
        func predicate() throws -> FetchPredicate {
            guard let format = json["where"] as? String else { throw DatasetError("missing \"where\" (a predicate such as \"teamName == 'Brazil'\")") }
            let predicate = try FetchPredicate(format: format)
            try predicate.validate(for: entity, in: model)
            return predicate
        }
        func values(_ key: String) throws -> [String: Any?] {
            guard let values = json[key] as? [String: Any] else { throw DatasetError("missing \"\(key)\" (an object of property names to values)") }
            return try Self.convert(values, for: entity)
        }
        switch op {
        case "insert":
            try known(["op", "entity", "values"])
            self = .insert(entity: entity, values: try values("values"))
        case "update":
            try known(["op", "entity", "where", "set", "add"])
            guard json["set"] != nil || json["add"] != nil else {
                throw DatasetError("missing \"set\" (an object of property names to values) or \"add\" (of number attributes to what to add)")
            }
            self = .update(entity: entity, predicate: try predicate(), values: json["set"] == nil ? [:] : try values("set"),
                           adding: json["add"] == nil ? [:] : try Self.amounts(json["add"], for: entity))
        case "delete":
            try known(["op", "entity", "where"])
            self = .delete(entity: entity, predicate: try predicate())
        default:
            throw DatasetError("unknown op \"\(op)\"; use insert, update, delete, save or refresh")
        }
    }

    /// An `add` object: number attributes to the amounts to add to them.
    private static func amounts(_ json: Any?, for entity: EntityDescription) throws -> [String: Value] {
        guard let json = json as? [String: Any] else { throw DatasetError("\"add\" takes an object of number attributes to what to add, such as {\"wins\":1}") }
        var amounts: [String: Value] = [:]
        for (key, amount) in json {
            guard let attribute = entity.attribute(named: key), [.integer, .double].contains(attribute.type) else {
                throw DatasetError("\(entity.name).\(key): \"add\" adds to integer and double attributes only")
            }
            guard let value = Value.fromJSON(amount, as: attribute.type) else {
                throw DatasetError("\(entity.name).\(key): \(Value.rangeProblem(of: amount, as: attribute.type) ?? "\(Value.jsonText(amount)) is not \(attribute.type == .integer ? "an" : "a") \(attribute.type) to add")")
            }
            amounts[key] = value
        }
        return amounts
    }

    /// JSON values as Swift values of the properties' types; relationships stay object ID text.
    private static func convert(_ values: [String: Any], for entity: EntityDescription) throws -> [String: Any?] {
        var converted: [String: Any?] = [:]
        for (key, json) in values {
            if let attribute = entity.attribute(named: key) {
                guard let value = Value.fromJSON(json, as: attribute.type) else {
                    let problem = Value.rangeProblem(of: json, as: attribute.type)
                        ?? "\(Value.jsonText(json)) is not \(attribute.type == .integer ? "an" : "a") \(attribute.type)"
                    throw DatasetError("\(entity.name).\(key): \(problem)")
                }
                converted[key] = value
            } else if let relationship = entity.relationship(named: key), !relationship.isToMany {
                if json is NSNull { converted[key] = .some(nil); continue }
                guard let text = json as? String, let id = ObjectID(string: text), id.entityName == relationship.destinationEntity else {
                    throw DatasetError("\(entity.name).\(key): give the ID of a \(relationship.destinationEntity) object, such as \"\(relationship.destinationEntity)/1\", or null")
                }
                converted[key] = id
            } else {
                throw DatasetError("\(entity.name) has no attribute or to-one relationship '\(key)'")
            }
        }
        return converted
    }

    func apply(to context: ObjectContext) throws {
        switch self {
        case .save:
            break
        case .refresh:
            // What the store holds now, unsaved edits discarded (they would keep the values
            // their edits began from, and conflict again).
            context.rollback()
            context.refreshAllObjects()
        case .insert(let entity, let values):
            let resolved = try Self.resolve(values, in: context)
            let object = try context.insert(entityName: entity.name)
            do {
                try Self.set(resolved, on: object)
            } catch {
                try? context.delete(object)   // a refused line changes nothing
                throw error
            }
        case .update(let entity, let predicate, let values, let amounts):
            let resolved = try Self.resolve(values, in: context)
            let objects = try context.fetch(FetchRequest<ManagedObject>(entityName: entity.name, predicate: predicate))
            guard !objects.isEmpty else { throw NothingMatched(entity: entity.name, predicate: predicate) }
            for object in objects {
                try Self.set(resolved, on: object)
                for (key, amount) in amounts.sorted(by: { $0.key < $1.key }) {
                    try object.setValue(object.attributeValue(forKey: key).adding(amount).anyValue, forKey: key)
                }
            }
        case .delete(let entity, let predicate):
            let objects = try context.fetch(FetchRequest<ManagedObject>(entityName: entity.name, predicate: predicate))
            guard !objects.isEmpty else { throw NothingMatched(entity: entity.name, predicate: predicate) }
            for object in objects { try context.delete(object) }
        }
    }

    /// Object IDs replaced by the objects, all checked before any value is set.
    /// An update or delete whose `where` matched no object: nothing changed, which a person
    /// should hear of (a misspelt name), without it counting as a bad line.
    struct NothingMatched: Error, CustomStringConvertible {
        let entity: String
        let predicate: FetchPredicate
        var description: String { "note: no \(entity) matches \(predicate.predicateFormat); nothing changed" }
    }

    private static func resolve(_ values: [String: Any?], in context: ObjectContext) throws -> [(String, Any?)] {
        try values.sorted { $0.key < $1.key }.map { key, value in
            guard let id = value as? ObjectID else { return (key, value) }
            let object: ManagedObject
            do {
                object = try context.existingObject(with: id)
            } catch {
                throw DatasetError("\(key): no object \(id) in the store; name one that exists (dump lists them)")
            }
            if object.isDeleted {
                throw DatasetError("\(key): \(id) was deleted earlier in this input; name an object that is not deleted")
            }
            return (key, object)
        }
    }

    private static func set(_ values: [(String, Any?)], on object: ManagedObject) throws {
        for (key, value) in values { try object.setValue(value, forKey: key) }
    }
}
