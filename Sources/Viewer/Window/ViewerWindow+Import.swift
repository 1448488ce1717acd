import CAdw
import CGtk
import CViewer
import Foundation
import GtkBinding
import ObjectStore

/// Importing a CSV or JSON-lines file into the list's entity, with the import bar.
extension ViewerWindow {
    /// Asks for a CSV or JSON-lines file and imports it into the list's entity.
    func chooseImportFile() {
        guard session != nil, !importBar.isRunning else { return }
        let chooser = gtk_file_chooser_native_new("Import Records", window.cast(), GTK_FILE_CHOOSER_ACTION_OPEN, "_Import", "_Cancel")!
        for (name, patterns) in [("CSV or JSON lines", ["*.csv", "*.jsonl", "*.ndjson", "*.json"]), ("All files", ["*"])] {
            let filter = gtk_file_filter_new()!
            gtk_file_filter_set_name(filter, name)
            for pattern in patterns { gtk_file_filter_add_pattern(filter, pattern) }
            gtk_file_chooser_add_filter(chooser, filter)
            g_object_unref(UnsafeMutableRawPointer(filter))
        }
        let dialog = UnsafeMutablePointer<GtkNativeDialog>(chooser)
        gtk_native_dialog_set_modal(dialog, 1)
        Signal.connect(UnsafeMutableRawPointer(chooser), "response") { [weak self] (response: guint) in
            defer { g_object_unref(UnsafeMutableRawPointer(chooser)) }
            guard Int32(bitPattern: response) == GTK_RESPONSE_ACCEPT.rawValue,
                  let file = gtk_file_chooser_get_file(chooser) else { return }
            defer { g_object_unref(UnsafeMutableRawPointer(file)) }
            guard let path = g_file_get_path(file) else { return }
            defer { g_free(path) }
            self?.startImport(file: URL(fileURLWithPath: String(cString: path)))
        }
        gtk_native_dialog_show(dialog)
    }

    /// A CSV or JSON-lines file dropped on the window (from a file manager) is imported, as
    /// one chosen with Import; another kind of file is refused with a toast saying which
    /// files are taken. Returns the drop target.
    func acceptDroppedFiles() -> OpaquePointer {
        let dropped: FrDroppedFileFunc = { path, data in
            guard let path, let data else { return 0 }
            let window = Unmanaged<DroppedFiles>.fromOpaque(data).takeUnretainedValue().window
            return MainActor.assumeIsolated { window?.importDropped(URL(fileURLWithPath: String(cString: path))) ?? false } ? 1 : 0
        }
        let box = Unmanaged.passRetained(DroppedFiles(self)).toOpaque()
        let release: GDestroyNotify = { data in Unmanaged<DroppedFiles>.fromOpaque(data!).release() }
        return fr_widget_accept_dropped_files(window, dropped, box, release)!
    }

    private func importDropped(_ file: URL) -> Bool {
        guard ["csv", "jsonl", "ndjson", "json"].contains(file.pathExtension.lowercased()) else {
            showToast("\(file.lastPathComponent) is not a CSV or JSON-lines file: drop a .csv, .jsonl or .json file to import it")
            return false
        }
        guard !importBar.isRunning else {
            showToast("An import is running: drop \(file.lastPathComponent) again when it has finished")
            return false
        }
        startImport(file: file)
        return true
    }

    /// Imports `file` (CSV or JSON lines) into the list's entity, in chunks of `chunkSize`
    /// records on a background queue, with the progress in the import bar; the list shows
    /// each chunk as it commits. An import of the file that stopped earlier resumes.
    ///
    /// Without a `chunkSize`, chunks of 1,000 records, the first ones smaller, and of 500 into
    /// a list of more than 200,000 rows. The window takes each chunk in one turn of its main
    /// loop. GTK 4.8 keeps row widgets for about 200 rows around the visible ones and makes,
    /// binds and measures one for each new row that lands among them: most rows of a chunk
    /// while the list is short, so chunks grow from 25 records. A shorter list's controller
    /// fetches its row keys again for a chunk, a cost of the list's length, not the chunk's;
    /// a longer one's places the chunk's rows, searching the store for each on a reader (off
    /// the main loop), but reads the chunk's objects and announces its rows on the main loop,
    /// so there chunks of 500 keep each turn short: into a million rows, chunks of 1,000
    /// imported about a tenth faster but stalled the window longer (p99 46 ms against 40 ms;
    /// the benchmark's `--only viewer1m`).
    package func startImport(file: URL, chunkSize: Int? = nil) {
        guard let session, !refusesEdits() else { return }
        importBar.start(file: file, entityName: session.controller.fetchRequest.entityName, store: session.context.store,
                        chunkSize: chunkSize ?? (listedObjectCount > 200_000 ? 500 : 1000),
                        firstChunkSize: chunkSize == nil ? 25 : nil)
    }

    /// Whether an import runs now.
    package var isImporting: Bool { importBar.isRunning }

    /// The number of objects the list shows.
    package var listedObjectCount: Int { session?.controller.numberOfObjects ?? 0 }

    /// How the list's context read the history of changes made elsewhere, and how many of its
    /// controller's batches were fetched again in the background (for the benchmark).
    package var followingCounts: (historyReads: HistoryReads, backgroundRefetches: Int)? {
        session.map { ($0.context.historyReads, $0.controller.counts.backgroundRefetches) }
    }
}

/// Who a drop on the window goes to (the C drop target holds it; the window, weakly).
private final class DroppedFiles {
    weak var window: ViewerWindow?
    init(_ window: ViewerWindow) { self.window = window }
}
