import FetchedResults
import Foundation
import ObjectStore

/// A folder of `data/`: a model, the records a new store starts with, and how to show them
/// (format: `Docs/Datasets.md`).
///
/// ## Topics
/// - ``load(named:)``
/// - ``openStore(at:)``
/// - ``makeController(context:sortOption:search:)``
package struct Dataset: Sendable {
    package let name: String
    package let folder: URL
    package let model: Model
    package let view: ViewConfiguration

    /// The names of the datasets that ship.
    package static let shipped = ["worldcup", "movies", "todo", "failedbanks"]

    /// Loads the dataset `name`, found by ``locate(named:)``.
    package static func load(named name: String) throws -> Dataset {
        try load(from: locate(named: name))
    }

    /// Loads the dataset in `folder`.
    package static func load(from folder: URL) throws -> Dataset {
        let model = try Model(contentsOf: folder.appendingPathComponent("model.json"))
        let view = try ViewConfiguration.load(from: folder.appendingPathComponent("view.json"))
        try view.validate(against: model, file: "\(folder.lastPathComponent)/view.json")
        return Dataset(name: folder.lastPathComponent, folder: folder, model: model, view: view)
    }

    /// The folder of dataset `name`: under `$FETCHED_RESULTS_DATA`, the installed
    /// `share/fetched-results/data` beside the executable's `bin`, or the source tree the
    /// program was built from.
    package static func locate(named name: String) throws -> URL {
        // The executable's real path (/proc/self/exe), also when it was started by name through PATH.
        let executable = (Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments.first ?? ".")).resolvingSymlinksInPath()
        var candidates: [URL] = []
        if let folder = ProcessInfo.processInfo.environment["FETCHED_RESULTS_DATA"] {
            candidates.append(URL(fileURLWithPath: folder))
        }
        candidates.append(executable.deletingLastPathComponent().appendingPathComponent("../share/fetched-results/data"))
        var folder = executable.deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(folder.appendingPathComponent("data"))
            folder.deleteLastPathComponent()
        }
        candidates.append(URL(fileURLWithPath: #filePath).appendingPathComponent("../../../data"))
        for candidate in candidates {
            let dataset = candidate.appendingPathComponent(name).standardized
            if FileManager.default.fileExists(atPath: dataset.appendingPathComponent("model.json").path) { return dataset }
        }
        throw DatasetError("no dataset named '\(name)'; the datasets are \(shipped.joined(separator: ", ")) (set FETCHED_RESULTS_DATA to a folder of datasets to use others)")
    }

    /// Where the dataset's store lives by default: `$XDG_DATA_HOME/fetched-results/NAME.sqlite`
    /// (`~/.local/share/...`).
    package var defaultStoreURL: URL {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_DATA_HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
        return base.appendingPathComponent("fetched-results").appendingPathComponent("\(name).sqlite")
    }

    /// Opens the store at `url` (the default when nil; read-only when the file exists and
    /// this process may not write it), creating its folder, and fills a
    /// new store with the seed records (see ``PersistentStore/insertInitialContents(_:)``:
    /// a store emptied by its user stays empty).
    /// `busyTimeout` is the store's ``PersistentStore/busyTimeout``.
    package func openStore(at url: URL? = nil, busyTimeout: TimeInterval = PersistentStore.defaultBusyTimeout) throws -> PersistentStore {
        let url = url ?? defaultStoreURL
        // A store this process may not write (a read-only file, another user's) is opened
        // for reading: it can be shown and dumped, not changed.
        if FileManager.default.fileExists(atPath: url.path) && !FileManager.default.isWritableFile(atPath: url.path) {
            return try PersistentStore(readingFrom: url, model: model, busyTimeout: busyTimeout)
        }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let store = try PersistentStore(url: url, model: model, busyTimeout: busyTimeout)
        do {
            try store.insertInitialContents(insertSeedRecords)
        } catch let error as ValidationError {
            throw DatasetError("\(name)/seed.json: the records do not fit the model: \(error)")
        }
        return store
    }

    /// Inserts the seed records (with their `@id` references) into `context`, unsaved.
    package func insertSeedRecords(into context: ObjectContext) throws {
        let url = folder.appendingPathComponent("seed.json")
        let file = "\(name)/seed.json"
        guard let root = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] else {
            throw DatasetError("\(file): expected an object of entity names to arrays of records")
        }
        var byID: [String: ManagedObject] = [:]
        var links: [(object: ManagedObject, key: String, value: Any, place: String)] = []
        for entityName in root.keys.sorted() {
            guard let entity = model.entity(named: entityName) else {
                throw DatasetError("\(file): \(entityName): no such entity; the model has \(model.entities.map(\.name).joined(separator: ", "))")
            }
            guard let records = root[entityName] as? [[String: Any]] else {
                throw DatasetError("\(file): \(entityName): expected an array of records")
            }
            for (index, record) in records.enumerated() {
                let object = try context.insert(entityName: entityName)
                for (key, json) in record.sorted(by: { $0.key < $1.key }) {
                    let place = "\(entityName)[\(index)].\(key)"
                    if key == "@id" {
                        guard let id = json as? String, byID[id] == nil else {
                            throw DatasetError("\(file): \(place): expected a text @id that no other record has")
                        }
                        byID[id] = object
                    } else if let attribute = entity.attribute(named: key) {
                        guard let value = Value.fromJSON(json, as: attribute.type) else {
                            throw DatasetError("\(file): \(place): \(json) is not \(attribute.type == .integer ? "an" : "a") \(attribute.type)")
                        }
                        try object.setValue(value, forKey: key)
                    } else if entity.relationship(named: key) != nil {
                        links.append((object, key, json, place))
                    } else {
                        throw DatasetError("\(file): \(place): \(entityName) has no property '\(key)'; its properties are \(entity.propertyNames.joined(separator: ", "))")
                    }
                }
            }
        }
        for link in links {
            func target(_ any: Any) throws -> ManagedObject {
                guard let id = any as? String, let object = byID[id] else {
                    throw DatasetError("\(file): \(link.place): \(any) is not the @id of a record")
                }
                return object
            }
            if link.value is NSNull { continue }
            if let array = link.value as? [Any] {
                try link.object.setValue(try array.map(target), forKey: link.key)
            } else {
                try link.object.setValue(try target(link.value), forKey: link.key)
            }
        }
    }

    /// The controller of the dataset's list, with a sort option and a search text applied.
    package func makeController(context: ObjectContext, sortOption: Int = 0, search: String = "") throws -> FetchedResultsController<ManagedObject> {
        let request = try view.makeFetchRequest(sortOption: sortOption, search: search)
        if let sections = view.sectionRequest, let sectionRequest = view.makeSectionFetchRequest() {
            let listEntity = try model.existingEntity(named: sections.entity)
            guard let items = listEntity.relationship(named: sections.itemsKey), items.isToMany else {
                throw DatasetError("view.json: sectionRequest.itemsKey: \(sections.entity) has no to-many relationship '\(sections.itemsKey)'")
            }
            return FetchedResultsController(fetchRequest: request, sectionFetchRequest: sectionRequest,
                                            sectionRelationshipKeyPath: items.inverseName, sectionNameKey: sections.titleKey,
                                            managedObjectContext: context)
        }
        return FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                        sectionNameKeyPath: view.fetchRequest.sectionKeyPath,
                                        cacheName: search.isEmpty && sortOption == 0 ? view.fetchRequest.cacheName : nil)
    }
}
