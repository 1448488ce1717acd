import CAdw
import CGtk
import GtkBinding
import Dispatch
import Foundation
import ObjectStore

/// The bar under the header that runs an import of a CSV or JSON-lines file into the list's
/// entity: a progress bar with a Cancel button while it runs, then what happened (how many
/// records, or the line that stopped it) until dismissed.
///
/// The import runs on a background queue in its own context and commits in chunks
/// (``ObjectImporter``); the window's context merges each chunk as it commits, so the list
/// shows the new rows chunk by chunk while the main loop stays free.
///
/// Used on the main thread only: the background work hands everything back through the
/// main queue (hence `@unchecked Sendable`).
final class ImportBar: @unchecked Sendable {
    let widget: Widget
    let progressBar: Widget
    let cancelButton: Widget
    let message: Widget
    let closeButton: Widget
    /// The import that runs now; nil when none does.
    private(set) var importer: ObjectImporter?
    /// Called when an import starts or ends.
    var didChangeState: (() -> Void)?

    var isRunning: Bool { importer != nil }
    /// Set when the window goes: its widgets are gone, the import is cancelled.
    private var isClosed = false

    init() {
        progressBar = gtk_progress_bar_new()
        gtk_progress_bar_set_show_text(progressBar.opaque, 1)
        gtk_widget_set_hexpand(progressBar, 1)
        gtk_widget_set_valign(progressBar, GTK_ALIGN_CENTER)
        cancelButton = makeButton(mnemonic: "_Cancel Import")
        message = makeLabel()
        wrapAnywhere(message)
        gtk_widget_set_hexpand(message, 1)
        closeButton = makeButton(icon: "window-close-symbolic", tooltip: "Dismiss")
        closeButton.addClass("flat")
        widget = makeBox(GTK_ORIENTATION_HORIZONTAL, spacing: 12, [progressBar, cancelButton, message, closeButton])
        widget.addClass("import-bar")
        widget.isVisible = false
        Signal.connect(cancelButton.object, "clicked") { [weak self] in self?.cancel() }
        Signal.connect(closeButton.object, "clicked") { [weak self] in self?.widget.isVisible = false }
    }

    /// Starts importing `file` into the entity `entityName` of `store`. An import that
    /// stopped earlier (a bad record, Cancel, the app closed) resumes where it stopped.
    func start(file: URL, entityName: String, store: PersistentStore, chunkSize: Int = 1000, firstChunkSize: Int? = nil) {
        guard importer == nil else { return }
        let importer: ObjectImporter
        do {
            importer = try ObjectImporter(store: store, entityName: entityName, file: file, chunkSize: chunkSize,
                                          firstChunkSize: firstChunkSize)
        } catch {
            return finish(message: "Cannot import \(file.lastPathComponent): \(error)", isError: true)
        }
        self.importer = importer
        show(running: true)
        gtk_progress_bar_set_fraction(progressBar.opaque, 0)
        gtk_progress_bar_set_text(progressBar.opaque, "Importing \(file.lastPathComponent)…")
        didChangeState?()
        DispatchQueue.global(qos: .userInitiated).async { [weak self] in
            let outcome = Result { try importer.run { progress in
                // Waits until the window's context has merged the chunk (on the main queue,
                // before this) and the window has drawn it (an idle below GTK's redraw priority
                // runs after the frame): the import never runs ahead of the list, so chunks
                // never pile up into one long stall of the main loop, nor two into one frame.
                let drawn = DispatchSemaphore(value: 0)
                DispatchQueue.main.sync {
                    self?.show(progress, of: file)
                    MainLoop.idle(priority: G_PRIORITY_DEFAULT_IDLE) { drawn.signal() }
                }
                drawn.wait()
            } }
            DispatchQueue.main.async { self?.finished(outcome, file: file) }
        }
    }

    /// Stops the import after the record it is reading; what was imported stays, and
    /// importing the file again resumes there.
    func cancel() {
        importer?.cancel()
        guard !isClosed else { return }
        gtk_widget_set_sensitive(cancelButton, 0)
        gtk_progress_bar_set_text(progressBar.opaque, "Cancelling…")
    }

    /// Cancels the import as the window closes; nothing is shown any more.
    func windowClosed() {
        isClosed = true
        cancel()
    }

    private func show(_ progress: ImportProgress, of file: URL) {
        guard importer != nil, !isClosed else { return }
        gtk_progress_bar_set_fraction(progressBar.opaque, progress.fractionCompleted)
        let percent = Int((progress.fractionCompleted * 100).rounded(.down))
        gtk_progress_bar_set_text(progressBar.opaque, "Importing \(file.lastPathComponent): \(Self.count(progress.recordsImported, "record")) (\(percent)%)")
    }

    private func finished(_ outcome: Result<ImportResult, any Error>, file: URL) {
        importer = nil
        guard !isClosed else { return }
        let name = file.lastPathComponent
        switch outcome {
        case .success(let result) where result.outcome == .finished:
            var text = "Imported \(Self.count(result.recordsImported, "record")) from \(name)."
            if let line = result.resumedAtLine { text += " It resumed at line \(line) (\(Self.count(result.totalRecordsImported, "record")) in all)." }
            finish(message: text, isError: false)
        case .success(let result):
            finish(message: "Import of \(name) cancelled at line \(result.nextLine) after \(Self.count(result.totalRecordsImported, "record")); they stay. Import the file again to resume there.", isError: false)
        case .failure(let error as ImportError):
            finish(message: "Import stopped: \(error)", isError: true)
        case .failure(let error):
            finish(message: "Import of \(name) stopped: \(error). What was imported stays; import the file again to resume.", isError: true)
        }
        didChangeState?()
    }

    private func finish(message text: String, isError: Bool) {
        guard !isClosed else { return }
        gtk_label_set_text(message.opaque, text)
        widget.setClass("import-error", isError)
        show(running: false)
    }

    private func show(running: Bool) {
        widget.isVisible = true
        progressBar.isVisible = running
        cancelButton.isVisible = running
        gtk_widget_set_sensitive(cancelButton, 1)
        message.isVisible = !running
        closeButton.isVisible = !running
    }

    /// "1 record", "2,500 records".
    static func count(_ number: Int, _ noun: String) -> String {
        "\(number.formatted(.number.locale(Locale(identifier: "en_US")))) \(noun)\(number == 1 ? "" : "s")"
    }
}
