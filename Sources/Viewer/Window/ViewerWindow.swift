import CGtk
import Datasets
import Foundation
import GtkBinding
import ObjectStore

/// The viewer's window: a header bar (dataset switcher; Add, Edit, Delete and Undo; sort
/// choice; search), the dataset's list on the left and the selected object's details on the
/// right.
///
/// A tap on a row (a double-click, or its +1 button) adds 1 to the dataset's counter and
/// saves; the row moves and stays selected, with the keyboard focus. In a dataset without a
/// counter a double-click edits. Keys: the arrows move the selection, Enter (and Ctrl+E)
/// edits the selected object, Ctrl+N adds, Delete deletes, Ctrl+Z undoes the last saved
/// edit, Ctrl+F searches, Ctrl+O imports a CSV or JSON-lines file, Ctrl+W and Ctrl+Q close.
///
/// The window follows its store: what another process commits (a script, another window,
/// the `sqlite3` shell, an import) shows as it commits, animated like a local change.
///
/// ## Topics
/// - ``init(application:options:)``
/// - ``open(datasetNamed:)``
/// - ``window``
/// - ``textDump``
/// - ``startImport(file:chunkSize:)``
/// - ``isImporting``
public final class ViewerWindow {
    // Here: the window's state, widgets and layout. The rest is in extensions by concern:
    // +Datasets, +Events (signals and keys), +Keyboard (moving through the list), +Editing (dialogs, delete, undo, the error
    // banner), +Import, +Selection (focus, detail pane) and +TextDump (reading it back).
    /// The `GtkApplicationWindow` (a plain `GtkWindow` without an application).
    public let window: UnsafeMutablePointer<GtkWidget>
    let options: ViewerOptions
    /// The dataset shown now (``open(datasetNamed:)`` replaces it).
    var session: DatasetSession?
    var factory: RowFactory?
    var contextObservation: ObservationToken?
    /// What the detail pane says about the object that was selected before (deleted...).
    var notice: String?
    /// The title of the selected object when the detail pane last showed it.
    var selectedTitle: String?
    /// Set by the person's own edits: the next time the selected row moves, the list scrolls
    /// and moves the focus after it. Changes from elsewhere (an import, another process)
    /// leave the view where the person put it.
    var followsSelectionOnce = false
    /// Where the key presses not yet followed move the selection (see +Keyboard).
    var pendingListPosition: Int?
    /// Called after the window showed a change: an edit, a selection, another dataset.
    public var didUpdate: (() -> Void)?

    let listView: Widget
    let detail = DetailPane()
    let datasetChoice: Widget
    let sortChoice: Widget
    let searchEntry: Widget
    let addButton: Widget
    let editButton: Widget
    let deleteButton: Widget
    let undoButton: Widget
    let importButton: Widget
    /// The progress of an import, and then its outcome.
    let importBar = ImportBar()
    /// The Add or Edit dialog opened last.
    weak var dialog: ObjectDialog?
    let banner: Widget
    /// Set while the window fills its choices, whose signals then ask for nothing.
    var isSettingChoices = false
    /// The list's key controller that makes Enter edit (capture phase).
    private(set) var enterController: OpaquePointer?
    let datasetNames: [String]

    /// A window on `options.datasetName`. Throws when the dataset or its store cannot be opened.
    public init(application: UnsafeMutablePointer<GtkApplication>?, options: ViewerOptions) throws {
        self.options = options
        Style.install()
        window = application.map { gtk_application_window_new($0) } ?? gtk_window_new()
        gtk_window_set_default_size(window.cast(), 900, 640)
        datasetNames = Dataset.shipped.contains(options.datasetName) ? Dataset.shipped : Dataset.shipped + [options.datasetName]

        let titles = datasetNames.map { (try? Dataset.load(named: $0).view.title) ?? $0 }
        datasetChoice = makeDropDown(titles, name: "Dataset")
        gtk_widget_set_tooltip_text(datasetChoice, "Dataset")
        sortChoice = makeDropDown([], name: "Sort order")
        gtk_widget_set_tooltip_text(sortChoice, "Sort order")
        searchEntry = gtk_search_entry_new()
        gtk_widget_set_tooltip_text(searchEntry, "Search (Ctrl+F)")
        addButton = makeButton(icon: "list-add-symbolic", tooltip: "Add (Ctrl+N)")
        editButton = makeButton(icon: "document-edit-symbolic", tooltip: "Edit (Enter)")
        deleteButton = makeButton(icon: "user-trash-symbolic", tooltip: "Delete (Delete)")
        undoButton = makeButton(icon: "edit-undo-symbolic", tooltip: "Undo (Ctrl+Z)")
        importButton = makeButton(icon: "document-open-symbolic", tooltip: "Import a CSV or JSON-lines file (Ctrl+O)", name: "Import")
        let header = gtk_header_bar_new()!
        gtk_header_bar_pack_start(header.opaque, datasetChoice)
        for button in [addButton, editButton, deleteButton, undoButton] { gtk_header_bar_pack_start(header.opaque, button) }
        gtk_header_bar_pack_end(header.opaque, importButton)
        gtk_header_bar_pack_end(header.opaque, searchEntry)
        gtk_header_bar_pack_end(header.opaque, sortChoice)
        gtk_window_set_titlebar(window.cast(), header)

        listView = gtk_list_view_new(nil, nil)
        listView.addClass("rich-list")
        // Rows move under a still pointer after every tap: each click must reach the row
        // that is under the pointer now.
        RowClicks.retargetClicks(in: listView)
        let scrolled = gtk_scrolled_window_new()!
        gtk_scrolled_window_set_policy(scrolled.opaque, GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC)
        gtk_scrolled_window_set_child(scrolled.opaque, listView)
        gtk_widget_set_size_request(scrolled, 320, -1)
        let paned = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL)!
        gtk_paned_set_start_child(paned.opaque, scrolled)
        gtk_paned_set_end_child(paned.opaque, detail.widget)
        gtk_paned_set_resize_start_child(paned.opaque, 1)
        gtk_paned_set_shrink_start_child(paned.opaque, 0)
        gtk_paned_set_shrink_end_child(paned.opaque, 0)
        gtk_paned_set_position(paned.opaque, 480)
        gtk_widget_set_vexpand(paned, 1)
        banner = makeLabel(classes: ["error-banner"])
        gtk_label_set_wrap(banner.opaque, 1)
        banner.isVisible = false
        gtk_window_set_child(window.cast(), makeBox(GTK_ORIENTATION_VERTICAL, [banner, importBar.widget, paned]))

        connectSignals()
        enterController = addEnterEdits()
        addListNavigation()
        addShortcuts()
        do {
            try open(datasetNamed: options.datasetName)
        } catch {
            gtk_window_destroy(window.cast())
            throw error
        }
    }
}
