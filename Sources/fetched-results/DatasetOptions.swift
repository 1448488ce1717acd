import ArgumentParser
import Datasets
import Foundation
import ObjectStore

/// The options every command that opens a dataset takes.
struct DatasetOptions: ParsableArguments {
    @Option(help: "The dataset: \(Dataset.shipped.joined(separator: ", ")).")
    var dataset = "worldcup"

    @Option(help: "The store file. Default: $XDG_DATA_HOME/fetched-results/<dataset>.sqlite, seeded from the dataset on first use.")
    var store: String?

    @Option(help: "Seconds a write waits while another process (or the sqlite3 shell) is writing the store.")
    var busyTimeout: Double = PersistentStore.defaultBusyTimeout

    /// The dataset and its opened store, which must be writable for a command that writes.
    func open(toWrite command: String) throws -> (Dataset, PersistentStore) {
        let (dataset, store) = try open()
        if store.isReadOnly {
            throw ValidationError("--store: \(store.url?.path ?? "the store") is read-only for this user, and \(command) writes to it; use a copy you may write, or `dump` to read it")
        }
        return (dataset, store)
    }

    /// The dataset and its opened store (read-only when this user may not write the file).
    func open() throws -> (Dataset, PersistentStore) {
        guard busyTimeout >= 0, busyTimeout.isFinite else {
            throw ValidationError("--busy-timeout: \(busyTimeout) is not a number of seconds of 0 or more")
        }
        let dataset = try Dataset.load(named: self.dataset)
        return (dataset, try dataset.openStore(at: try storeURL(), busyTimeout: busyTimeout))
    }

    /// `--store` as a file URL, refused with what to do when it cannot be a store file.
    private func storeURL() throws -> URL? {
        guard let store else { return nil }
        guard !store.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ValidationError("--store: the path is empty; give the store file's path, e.g. --store cup.sqlite")
        }
        let url = URL(fileURLWithPath: store)
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), isFolder.boolValue {
            throw ValidationError("--store \(store) is a folder; give a file in it, e.g. --store \(url.appendingPathComponent("\(dataset).sqlite").path)")
        }
        // A parent that is a file, not a folder: say which.
        var parent = url.deletingLastPathComponent()
        while parent.path != "/" && !FileManager.default.fileExists(atPath: parent.path) { parent.deleteLastPathComponent() }
        if FileManager.default.fileExists(atPath: parent.path, isDirectory: &isFolder), !isFolder.boolValue {
            throw ValidationError("--store \(store): \(parent.path) is a file, not a folder; put the store in a folder")
        }
        return url
    }
}

/// Writes one JSON value as a line on standard output, at once: a program reading a pipe
/// sees each line as it is written, not when a buffer fills or the command ends.
func printJSON(_ value: Any) {
    let data = (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("null".utf8)
    print(String(decoding: data, as: UTF8.self))
    fflush(nil)  // every output stream: standard output is the one written
}
