import Foundation
import ObjectStore

/// Finds the datasets in `data/` and loads their seed records.
enum Dataset {
    /// The folder of dataset `name`: under `$FETCHED_RESULTS_DATA`, the installed share
    /// folder, or the source tree this executable was built from.
    static func locate(named name: String) throws -> URL {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var candidates: [URL] = []
        if let folder = ProcessInfo.processInfo.environment["FETCHED_RESULTS_DATA"] {
            candidates.append(URL(fileURLWithPath: folder))
        }
        candidates.append(executable.deletingLastPathComponent().appendingPathComponent("../share/fetched-results/data"))
        // Built with `swift build`: the executable is in .build/<triple>/<config>/.
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
        throw DatasetError("dataset '\(name)' not found; set FETCHED_RESULTS_DATA to the project's data folder")
    }

    /// Inserts the records of a seed file (`{"Entity": [{"attribute": value, ...}, ...]}`) and saves.
    static func seed(_ context: ObjectContext, from url: URL) throws {
        let file = url.lastPathComponent
        guard let root = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: [[String: Any]]] else {
            throw DatasetError("\(file): expected an object of entity names to arrays of records")
        }
        for (entityName, records) in root.sorted(by: { $0.key < $1.key }) {
            let entity = try context.model.existingEntity(named: entityName)
            for (index, record) in records.enumerated() {
                let object = try context.insert(entityName: entityName)
                for (key, json) in record {
                    guard let attribute = entity.attribute(named: key) else {
                        throw DatasetError("\(file): \(entityName)[\(index)].\(key): \(entityName) has no attribute '\(key)'")
                    }
                    guard let value = Value.fromJSON(json, as: attribute.type) else {
                        throw DatasetError("\(file): \(entityName)[\(index)].\(key): \(json) is not a \(attribute.type)")
                    }
                    try object.setValue(value, forKey: key)
                }
            }
        }
        try context.save()
    }

    static func removeStore(at url: URL) {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }
}

struct DatasetError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
