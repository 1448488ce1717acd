import CAdw
import CGtk
import CViewer
import Datasets
import Foundation
import GtkBinding
import ObjectStore
import Sharing

/// The viewer's window, a libadwaita window by the GNOME HIG: the list on the left with its
/// header bar (Add, the dataset as the title, Search, the primary menu with the sort orders,
/// Import, Keyboard Shortcuts and About) and a search bar; the selected object's details on
/// the right with theirs (Undo, Edit, Delete). Narrower than about 640 px the two fold into
/// one pane at a time (`AdwLeaflet`): a click on a row shows its details, Back the list.
///
/// A tap on a row (a double-click, or its +1 button) adds 1 to the dataset's counter and
/// saves; the row moves and stays selected, with the keyboard focus. In a dataset without a
/// counter a double-click edits. Keys: the arrows, Page Up/Down, Home and End move the
/// selection across section headers, Enter (and Ctrl+E) edits the selected object, + adds 1
/// to its counter, Ctrl+N adds, Delete deletes, Ctrl+Z undoes the last saved edit, Ctrl+F (or
/// typing) searches and Escape (wherever the focus is) ends the search, Ctrl+O imports a CSV or JSON-lines file, F10 opens the menu,
/// Ctrl+? lists the shortcuts, Ctrl+W and Ctrl+Q close. What happened to the selected object
/// (deleted, gone from the list) shows as a toast, with Undo where it can be undone.
///
/// The window follows its store: what another process commits (a script, another window,
/// the `sqlite3` shell, an import) shows as it commits, like a local change. GtkListView 4.8
/// does not animate moves: a moved row appears at its new place. A store that shares through
/// PostgreSQL (``ViewerOptions/shareURL``, or one that remembers its server) shows other
/// desktops' changes the same way; an indicator in the list's header bar says how it stands
/// with its server, and the primary menu has Share… and Stop Sharing.
///
/// ## Topics
/// - ``init(application:options:)``
/// - ``open(datasetNamed:)``
/// - ``isLoading``
/// - ``window``
/// - ``textDump``
/// - ``startImport(file:chunkSize:)``
/// - ``isImporting``
package final class ViewerWindow {
    // Here: the window's state, widgets and layout. The rest is in extensions by concern:
    // +Datasets, +Events (signals, actions and keys), +Keyboard (moving through the list),
    // +Editing (dialogs, delete, undo, toasts, the error banner), +Import, +Selection (focus,
    // detail pane, empty states), +Sharing (PostgreSQL) and +TextDump (reading it back).
    /// The `AdwApplicationWindow` (an `AdwWindow` without an application).
    package let window: UnsafeMutablePointer<GtkWidget>
    let options: ViewerOptions
    /// The dataset shown now (``open(datasetNamed:)`` replaces it).
    var session: DatasetSession?
    var factory: RowFactory?
    /// The current section's header over the top of the list as it scrolls.
    let stickyHeader = StickyHeader()
    /// Keeps the rows on screen still while a tap or another program's change moves rows.
    var listAnchor: ListAnchor<ManagedObject>?
    var contextObservation: ObservationToken?
    /// The title of the selected object when the detail pane last showed it.
    var selectedTitle: String?
    /// Set by the person's own edits: the next time the selected row moves, the list scrolls
    /// and moves the focus after it. Changes from elsewhere (an import, another process)
    /// leave the view where the person put it.
    var followsSelectionOnce = false
    /// Where the key presses not yet followed move the selection (see +Keyboard).
    var pendingListPosition: Int?
    /// While the window opens, how many more times to try giving the keyboard focus to the
    /// selected row once it is shown, 20 ms apart (GTK would give it to the first header
    /// button or a label of the detail pane, and the arrows would not move the selection
    /// until a click or a Tab); 0 once the row has it, or once the person went to the search.
    var openingFocusTries = 0
    /// GtkBinding's watch of the focus lost with a dropped row (see `watchFocusLostWithItsRow`).
    private(set) var selectionFocus: SelectionFocus!
    /// Whether GTK took the focus out of the list with a dropped row's widget, and it has
    /// not been given back to the selected row yet (nor taken elsewhere by the person).
    var focusLostWithItsRow: Bool {
        get { selectionFocus?.isLost ?? false }
        set { selectionFocus?.isLost = newValue }
    }
    /// Called after the window showed a change: an edit, a selection, another dataset.
    package var didUpdate: (() -> Void)?
    /// The text of the toast shown last, while it shows (for ``textDump``).
    var shownToast: String?
    /// The window's drop target for files (a `GtkDropTarget`).
    var fileDrop: OpaquePointer?
    /// The help page F1 last opened (or tried to), for tests.
    var shownHelp: URL?

    let listView: Widget
    let detail = DetailPane()
    let datasetChoice: Widget
    let searchBar: Widget
    let searchEntry: Widget
    let searchButton: Widget
    let menuButton: Widget
    let addButton: Widget
    let editButton: Widget
    let deleteButton: Widget
    let undoButton: Widget
    let backButton: Widget
    let leaflet: Widget
    let listPane: Widget
    let detailPane: Widget
    /// The list, or a status page when it has no rows ("No Results" for a search).
    let listStack: Widget
    let emptyPage: Widget
    /// Spins in the status page while the first rows are fetched.
    let loadingSpinner: Widget
    let toastOverlay: Widget
    /// Where the `win.` actions are: the window, or a group the window holds.
    private(set) var actionMap: UnsafeMutableRawPointer!
    /// `win.sort` (the sort order, an integer state), `win.import`.
    private(set) var sortAction: OpaquePointer!
    private(set) var importAction: OpaquePointer!
    /// `win.share-section`: whether the selected row's section (to-do: its list) is shared with
    /// every role, where the section entity has an owner.
    private(set) var sectionSharingAction: OpaquePointer!
    /// `win.new-section`, `win.rename-section` and `win.delete-section` (see +Sections).
    private(set) var sectionActions: SectionActions!
    /// The New List… or Rename List… dialog opened last.
    var sectionTitleDialog: SectionTitleDialog?
    /// How many selected rows Delete deletes at once (more are refused with a toast).
    var deleteLimit = 10_000
    /// The rows being deleted with a section object, or together: their removal says nothing
    /// of its own (one toast says what went).
    var rowsDeletedTogether: Set<ObjectID> = []
    /// The progress of an import, and then its outcome.
    let importBar = ImportBar()
    /// The spinner in the search bar and the dimmed rows while a search or a sort is fetched.
    let fetchProgress = FetchProgress()
    /// The Add or Edit dialog opened last.
    weak var dialog: ObjectDialog?
    let banner: Widget
    /// Set while the window fills its choices, whose signals then ask for nothing.
    var isSettingChoices = false
    /// The list's key controller that makes Enter edit (capture phase).
    private(set) var enterController: OpaquePointer?
    let datasetNames: [String]
    /// The header bar's sharing indicator (see +Sharing).
    let sharingIndicator = SharingIndicator()
    /// `win.share` and `win.stop-sharing`.
    private(set) var shareAction: OpaquePointer!
    private(set) var stopSharingAction: OpaquePointer!
    /// What the next opening of a dataset does about sharing: `--share` or `--unshare` for
    /// the first one, the Share dialog's server for the one shown.
    var shareRequest: (dataset: String, request: ShareRequest)?
    /// The conflicts each sharing toast names, by the number of its last (for its Details).
    var toastedConflicts: [Int64: [SharingConflict]] = [:]
    /// The rejected changes each toast names, by the number of its last (for its Details).
    var toastedRejections: [Int64: [RejectedChange]] = [:]
    /// The Share dialog opened last.
    weak var shareDialog: ShareDialog?

    /// A window on `options.datasetName`. Throws when the dataset or its store cannot be opened.
    ///
    /// The window shows at once: its rows come from the section cache when it is valid, else
    /// they are fetched off the main thread while the list shows "Loading…" (``isLoading``).
    package init(application: UnsafeMutablePointer<GtkApplication>?, options: ViewerOptions) throws {
        self.options = options
        adw_init()
        Renderer.choose()
        // The first dataset's store opens, and its rows are fetched off the main thread,
        // while the widgets are made (20-25 ms): at a million rows without a section cache
        // they show that much sooner.
        let firstSession = try Self.makeSession(datasetNamed: options.datasetName, options: options)
        Style.install()
        window = Self.makeWindow(application: application, options: options)
        datasetNames = Dataset.shipped.contains(options.datasetName) ? Dataset.shipped : Dataset.shipped + [options.datasetName]

        let list = Self.makeListPane(datasetTitles: datasetNames.map { (try? Dataset.load(named: $0).view.title) ?? $0 },
                                     window: window, sharingIndicator: sharingIndicator.widget, sharingProgress: sharingIndicator.progressBar, searchSpinner: fetchProgress.spinner,
                                     stickyHeader: stickyHeader)
        (datasetChoice, addButton, searchButton, menuButton) = (list.datasetChoice, list.addButton, list.searchButton, list.menuButton)
        (searchBar, searchEntry, listView) = (list.searchBar, list.searchEntry, list.listView)
        (listStack, emptyPage, loadingSpinner, listPane) = (list.stack, list.emptyPage, list.loadingSpinner, list.pane)
        let details = Self.makeDetailPane(detail.widget)
        (backButton, undoButton, editButton, deleteButton, detailPane) = (details.back, details.undo, details.edit, details.delete, details.pane)

        leaflet = Self.makeLeaflet(listPane: listPane, listHeader: list.header, detailPane: detailPane, detailHeader: details.header,
                                   backButton: backButton)
        banner = makeLabel(classes: ["error-banner"])
        wrapAnywhere(banner)
        banner.isVisible = false
        toastOverlay = adw_toast_overlay_new()
        adw_toast_overlay_set_child(toastOverlay.opaque, makeBox(GTK_ORIENTATION_VERTICAL, [banner, importBar.widget, leaflet]))
        if application != nil {
            adw_application_window_set_content(window.cast(), toastOverlay)
        } else {
            adw_window_set_content(window.cast(), toastOverlay)
        }

        setUpActionMap(isApplicationWindow: application != nil)
        connectSignals()
        sortAction = addActions()
        importAction = Action.add(to: actionMap, "import") { [weak self] _ in self?.chooseImportFile() }
        sectionSharingAction = Action.addCheck(to: actionMap, "share-section") { [weak self] isShared in
            guard let self, let object = self.session?.selection.selectedObject else { return }
            self.perform { try $0.setSectionShared(of: object, to: isShared) }
        }
        sectionActions = addSectionActions()
        stickyHeader.titleAboveTop = { [weak self] in self?.sectionTitleAboveTop() }
        fileDrop = acceptDroppedFiles()
        (shareAction, stopSharingAction) = addSharingActions()
        shareRequest = options.shareURL.map { (options.datasetName, .share(url: $0)) } ?? (options.unshare ? (options.datasetName, .unshare) : nil)
        enterController = addEnterEdits()
        selectionFocus = watchFocusLostWithItsRow()
        addListNavigation()
        addShortcuts()
        openingFocusTries = 50
        show(firstSession)
    }

    /// The window, its size and colour scheme; no narrower than the smallest phone-sized
    /// width GNOME designs for.
    private static func makeWindow(application: UnsafeMutablePointer<GtkApplication>?, options: ViewerOptions) -> Widget {
        let window: Widget = application.map { adw_application_window_new($0) } ?? adw_window_new()
        gtk_window_set_default_size(window.cast(), Int32(options.windowSize?.width ?? 900), Int32(options.windowSize?.height ?? 640))
        switch options.colorScheme {
        case .system: break
        case .light: adw_style_manager_set_color_scheme(adw_style_manager_get_default(), ADW_COLOR_SCHEME_FORCE_LIGHT)
        case .dark: adw_style_manager_set_color_scheme(adw_style_manager_get_default(), ADW_COLOR_SCHEME_FORCE_DARK)
        }
        // The smallest phone-sized width GNOME designs for.
        gtk_widget_set_size_request(window, 360, 300)
        if ViewerApplication.applicationID.hasSuffix(".Devel") { window.addClass("devel") }
        return window
    }

    /// The two panes side by side, or one at a time when folded (Back returns to the list).
    private static func makeLeaflet(listPane: Widget, listHeader: Widget, detailPane: Widget, detailHeader: Widget,
                                    backButton: Widget) -> Widget {
        let leaflet = adw_leaflet_new()!
        fr_accessible_set_text(leaflet, GTK_ACCESSIBLE_PROPERTY_LABEL, "Rows and details")
        adw_leaflet_set_can_navigate_back(leaflet.opaque, 1)
        adw_leaflet_append(leaflet.opaque, listPane)
        let separator = gtk_separator_new(GTK_ORIENTATION_VERTICAL)!
        adw_leaflet_page_set_navigatable(adw_leaflet_append(leaflet.opaque, separator), 0)
        adw_leaflet_append(leaflet.opaque, detailPane)
        gtk_widget_set_vexpand(leaflet, 1)
        // Unfolded, the window's buttons are at the detail pane's end; folded, each pane has them.
        for (property, header) in [("show-end-title-buttons", listHeader), ("show-start-title-buttons", detailHeader)] {
            g_object_bind_property(UnsafeMutableRawPointer(leaflet), "folded", UnsafeMutableRawPointer(header), property, G_BINDING_SYNC_CREATE)
        }
        g_object_bind_property(UnsafeMutableRawPointer(leaflet), "folded", UnsafeMutableRawPointer(backButton), "visible", G_BINDING_SYNC_CREATE)
        return leaflet
    }

    /// The list pane: header bar (Add, the dataset, sharing, search, the menu), search bar,
    /// the list or its status page.
    private static func makeListPane(datasetTitles: [String], window: Widget, sharingIndicator: Widget, sharingProgress: Widget, searchSpinner: Widget,
                                     stickyHeader: StickyHeader)
        -> (pane: Widget, header: Widget, datasetChoice: Widget, addButton: Widget, searchButton: Widget, menuButton: Widget,
            searchBar: Widget, searchEntry: Widget, listView: Widget, stack: Widget, emptyPage: Widget, loadingSpinner: Widget) {
        let datasetChoice = makeDropDown(datasetTitles, name: "Dataset")
        gtk_widget_set_tooltip_text(datasetChoice, "Dataset")
        // Room for the sharing indicator at 360 pixels.
        gtk_drop_down_set_factory(datasetChoice.opaque, makeShrinkingLabelFactory())
        let addButton = makeButton(icon: "list-add-symbolic", tooltip: "Add (Ctrl+N)")
        let searchButton = gtk_toggle_button_new()!
        gtk_button_set_icon_name(searchButton.cast(), "system-search-symbolic")
        gtk_widget_set_tooltip_text(searchButton, "Search (Ctrl+F)")
        nameIconButton(searchButton, "Search")
        let menuButton = gtk_menu_button_new()!
        gtk_menu_button_set_icon_name(menuButton.opaque, "open-menu-symbolic")
        gtk_widget_set_tooltip_text(menuButton, "Main Menu (F10)")
        fr_accessible_set_text(menuButton, GTK_ACCESSIBLE_PROPERTY_LABEL, "Main Menu")
        gtk_menu_button_set_primary(menuButton.opaque, 1)
        // The sharing indicator at the start: the end has the search, the menu and, folded,
        // the window's buttons, and the title is centred between the two.
        let header = makeHeaderBar(start: [addButton, sharingIndicator], title: datasetChoice, end: [menuButton, searchButton])

        let searchEntry = gtk_search_entry_new()!
        gtk_widget_set_hexpand(searchEntry, 1)
        fr_accessible_set_text(searchEntry, GTK_ACCESSIBLE_PROPERTY_LABEL, "Search")
        let searchBar = gtk_search_bar_new()!
        gtk_search_bar_set_child(searchBar.opaque, makeBox(GTK_ORIENTATION_HORIZONTAL, spacing: 6, [searchEntry, searchSpinner]))
        gtk_search_bar_connect_entry(searchBar.opaque, searchEntry.opaque)
        gtk_search_bar_set_key_capture_widget(searchBar.opaque, window)
        g_object_bind_property(UnsafeMutableRawPointer(searchButton), "active", UnsafeMutableRawPointer(searchBar), "search-mode-enabled",
                               GBindingFlags(rawValue: G_BINDING_BIDIRECTIONAL.rawValue | G_BINDING_SYNC_CREATE.rawValue))

        let (listView, stack, emptyPage, loadingSpinner) = makeListStack(stickyHeader: stickyHeader)
        let pane = makeBox(GTK_ORIENTATION_VERTICAL, [header, sharingProgress, searchBar, stack])
        gtk_widget_set_size_request(pane, 360, -1)
        return (pane, header, datasetChoice, addButton, searchButton, menuButton, searchBar, searchEntry, listView, stack, emptyPage, loadingSpinner)
    }

    /// The list, in its scrolled window under the sticky header, and the status page shown
    /// instead when it has no rows (with the spinner of the first fetch), in a stack.
    private static func makeListStack(stickyHeader: StickyHeader) -> (listView: Widget, stack: Widget, emptyPage: Widget, loadingSpinner: Widget) {
        let listView = gtk_list_view_new(nil, nil)!
        listView.addClass("rich-list")
        // Rows move under a still pointer after every tap: each click must reach the row
        // that is under the pointer now.
        RowClicks.retargetClicks(in: listView)
        let scrolled = gtk_scrolled_window_new()!
        gtk_scrolled_window_set_policy(scrolled.opaque, GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC)
        gtk_scrolled_window_set_child(scrolled.opaque, listView)
        gtk_widget_set_vexpand(scrolled, 1)
        nameScrollBars(of: scrolled, "Scroll the list")
        let emptyPage = adw_status_page_new()!
        let loadingSpinner = gtk_spinner_new()!
        gtk_widget_set_size_request(loadingSpinner, 32, 32)
        fr_accessible_set_text(loadingSpinner, GTK_ACCESSIBLE_PROPERTY_LABEL, "Loading")
        adw_status_page_set_child(emptyPage.opaque, loadingSpinner)
        let stack = gtk_stack_new()!
        fr_accessible_object_set_label(UnsafeMutableRawPointer(gtk_stack_add_named(stack.opaque, stickyHeader.wrap(scrolled), "list")), "Rows")
        fr_accessible_object_set_label(UnsafeMutableRawPointer(gtk_stack_add_named(stack.opaque, emptyPage, "empty")), "Status")
        // The status page scrolls its content in a scrolled window of its own.
        if let inner = gtk_widget_get_first_child(emptyPage), g_type_check_instance_is_a(inner.cast(), gtk_scrolled_window_get_type()) != 0 {
            nameScrollBars(of: inner, "Scroll the status")
        }
        return (listView, stack, emptyPage, loadingSpinner)
    }

    /// A header bar with `start` packed from its start, `end` from its end (the first
    /// outermost) and `title` between; its inner boxes named for screen readers.
    private static func makeHeaderBar(start: [Widget], title: Widget, end: [Widget]) -> Widget {
        let header = adw_header_bar_new()!
        InnerPartNames.name(headerBar: header)
        for widget in start { adw_header_bar_pack_start(header.opaque, widget) }
        adw_header_bar_set_title_widget(header.opaque, title)
        for widget in end { adw_header_bar_pack_end(header.opaque, widget) }
        return header
    }

    /// The detail pane: its header bar (Back, Undo, Edit, Delete) and the details.
    private static func makeDetailPane(_ details: Widget)
        -> (pane: Widget, header: Widget, back: Widget, undo: Widget, edit: Widget, delete: Widget) {
        let back = makeButton(icon: "go-previous-symbolic", tooltip: "Back to the list")
        let undo = makeButton(icon: "edit-undo-symbolic", tooltip: "Undo (Ctrl+Z)")
        let edit = makeButton(icon: "document-edit-symbolic", tooltip: "Edit (Enter)")
        let delete = makeButton(icon: "user-trash-symbolic", tooltip: "Delete (Delete)")
        // An empty title (the detail pane has its own heading), which nothing should read.
        let title = gtk_label_new(nil)!
        fr_accessible_set_hidden(title, 1)
        let header = makeHeaderBar(start: [back, undo], title: title, end: [delete, edit])
        gtk_widget_set_vexpand(details, 1)
        let pane = makeBox(GTK_ORIENTATION_VERTICAL, [header, details])
        gtk_widget_set_hexpand(pane, 1)
        gtk_widget_set_size_request(pane, 280, -1)
        return (pane, header, back, undo, edit, delete)
    }

    /// Where the `win.` actions go: an application window is an action map itself; a plain
    /// window (tests, the benchmark) gets a group of its own under that prefix.
    private func setUpActionMap(isApplicationWindow: Bool) {
        if isApplicationWindow {
            actionMap = UnsafeMutableRawPointer(window)
        } else {
            let group = g_simple_action_group_new()!
            gtk_widget_insert_action_group(window, "win", OpaquePointer(group))
            g_object_unref(UnsafeMutableRawPointer(group))
            actionMap = UnsafeMutableRawPointer(group)
        }
    }
}
