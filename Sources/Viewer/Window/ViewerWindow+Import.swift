import CAdw
import CGtk
import Foundation
import GtkBinding

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
}
