import CGtk
import Datasets
import FetchedResults
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
    /// The `GtkApplicationWindow` (a plain `GtkWindow` without an application).
    public let window: UnsafeMutablePointer<GtkWidget>
    let options: ViewerOptions
    private(set) var session: DatasetSession?
    private(set) var factory: RowFactory?
    private var contextObservation: ObservationToken?
    /// What the detail pane says about the object that was selected before (deleted...).
    private var notice: String?
    /// The title of the selected object when the detail pane last showed it.
    private var selectedTitle: String?
    /// Set by the person's own edits: the next time the selected row moves, the list scrolls
    /// and moves the focus after it. Changes from elsewhere (an import, another process)
    /// leave the view where the person put it.
    private var followsSelectionOnce = false
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
    private(set) weak var dialog: ObjectDialog?
    let banner: Widget
    private var isSettingChoices = false
    /// The list's key controller that makes Enter edit (capture phase).
    private(set) var enterController: OpaquePointer?
    private let datasetNames: [String]

    /// A window on `options.datasetName`. Throws when the dataset or its store cannot be opened.
    public init(application: UnsafeMutablePointer<GtkApplication>?, options: ViewerOptions) throws {
        self.options = options
        Style.install()
        window = application.map { gtk_application_window_new($0) } ?? gtk_window_new()
        gtk_window_set_default_size(window.cast(), 900, 640)
        datasetNames = Dataset.shipped.contains(options.datasetName) ? Dataset.shipped : Dataset.shipped + [options.datasetName]

        let titles = datasetNames.map { (try? Dataset.load(named: $0).view.title) ?? $0 }
        datasetChoice = Self.makeDropDown(titles)
        gtk_widget_set_tooltip_text(datasetChoice, "Dataset")
        sortChoice = Self.makeDropDown([])
        gtk_widget_set_tooltip_text(sortChoice, "Sort order")
        searchEntry = gtk_search_entry_new()
        gtk_widget_set_tooltip_text(searchEntry, "Search (Ctrl+F)")
        addButton = Self.makeButton(icon: "list-add-symbolic", tooltip: "Add (Ctrl+N)")
        editButton = Self.makeButton(icon: "document-edit-symbolic", tooltip: "Edit (Enter)")
        deleteButton = Self.makeButton(icon: "user-trash-symbolic", tooltip: "Delete (Delete)")
        undoButton = Self.makeButton(icon: "edit-undo-symbolic", tooltip: "Undo (Ctrl+Z)")
        importButton = Self.makeButton(icon: "document-open-symbolic", tooltip: "Import a CSV or JSON-lines file (Ctrl+O)")
        let header = gtk_header_bar_new()!
        gtk_header_bar_pack_start(header.opaque, datasetChoice)
        for button in [addButton, editButton, deleteButton, undoButton] { gtk_header_bar_pack_start(header.opaque, button) }
        gtk_header_bar_pack_end(header.opaque, importButton)
        gtk_header_bar_pack_end(header.opaque, searchEntry)
        gtk_header_bar_pack_end(header.opaque, sortChoice)
        gtk_window_set_titlebar(window.cast(), header)

        listView = gtk_list_view_new(nil, nil)
        listView.addClass("rich-list")
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
        addEnterEdits()
        addShortcuts()
        do {
            try open(datasetNamed: options.datasetName)
        } catch {
            gtk_window_destroy(window.cast())
            throw error
        }
    }

    // MARK: Datasets

    /// Shows the dataset `name` instead of the current one.
    public func open(datasetNamed name: String) throws {
        let dataset = try Dataset.load(named: name)
        let session = try DatasetSession(dataset: dataset, storeURL: options.storeURL(for: name), busyTimeout: options.busyTimeout)
        let factory = RowFactory(session: session)
        factory.didToggle = { [weak self] object, isOn in
            self?.later { try $0.setToggle(of: object, to: isOn) }
        }
        factory.didTapCounter = { [weak self] object in
            self?.session?.selection.select(object)
            self?.later { try $0.incrementCounter(of: object) }
        }
        session.selection.didChange = { [weak self] event in self?.selectionChanged(event) }
        session.keptChangesSaved = { [weak self] in self?.showError(nil) }
        contextObservation = session.context.addObserver { [weak self] _ in self?.refreshDetail() }
        self.session = session
        self.factory = factory
        notice = nil
        // Without a model first, so that the new factory never binds the old dataset's items.
        gtk_list_view_set_model(listView.opaque, nil)
        gtk_list_view_set_factory(listView.opaque, factory.factory)
        gtk_list_view_set_model(listView.opaque, session.selection.selectionModel)
        gtk_window_set_title(window.cast(), dataset.view.title ?? dataset.name)
        setChoices(for: dataset)
        showError(nil)
        // Start with the first object selected, so that the detail pane shows something.
        let first = (0..<session.rows.count).lazy.compactMap(session.object(atPosition:)).first
        session.selection.select(first)
    }

    private func setChoices(for dataset: Dataset) {
        isSettingChoices = true
        defer { isSettingChoices = false }
        gtk_drop_down_set_selected(datasetChoice.opaque, guint(datasetNames.firstIndex(of: dataset.name) ?? 0))
        let sortTitles = (dataset.view.sortOptions ?? []).map(\.title)
        let sortModel = Self.stringList(sortTitles)
        gtk_drop_down_set_model(sortChoice.opaque, sortModel)
        g_object_unref(UnsafeMutableRawPointer(sortModel))
        gtk_drop_down_set_selected(sortChoice.opaque, 0)
        sortChoice.isVisible = sortTitles.count > 1
        gtk_editable_set_text(OpaquePointer(searchEntry), "")
        searchEntry.isVisible = !(dataset.view.searchKeys ?? []).isEmpty
        addButton.isVisible = !(dataset.view.addFields ?? []).isEmpty
        editButton.isVisible = !(dataset.view.editFields ?? []).isEmpty
        updateButtons()
    }

    // MARK: Events

    private func connectSignals() {
        Signal.connect(listView.object, "activate") { [weak self] (position: guint) in
            guard let self, let session = self.session, let object = session.object(atPosition: Int(position)) else { return }
            session.selection.select(object)
            // A tap (a double-click: Enter never gets here, see `addEnterEdits`) adds to the
            // counter where the dataset has one; elsewhere it edits.
            if session.view.counter != nil {
                self.later { try $0.incrementCounter(of: object) }
            } else {
                self.showEditDialog()
            }
        }
        Signal.connect(addButton.object, "clicked") { [weak self] in self?.showAddDialog() }
        Signal.connect(editButton.object, "clicked") { [weak self] in self?.showEditDialog() }
        Signal.connect(deleteButton.object, "clicked") { [weak self] in self?.deleteSelection() }
        Signal.connect(undoButton.object, "clicked") { [weak self] in self?.undo() }
        Signal.connect(importButton.object, "clicked") { [weak self] in self?.chooseImportFile() }
        // One import at a time, into the dataset it started in.
        importBar.didChangeState = { [weak self] in
            guard let self else { return }
            let idle: gboolean = self.importBar.isRunning ? 0 : 1
            gtk_widget_set_sensitive(self.importButton, idle)
            gtk_widget_set_sensitive(self.datasetChoice, idle)
        }
        Signal.connect(window.object, "destroy") { [weak self] in self?.importBar.windowClosed() }
        Signal.connect(datasetChoice.object, "notify::selected") { [weak self] (_: gpointer?) in
            guard let self, !self.isSettingChoices else { return }
            let index = Int(gtk_drop_down_get_selected(self.datasetChoice.opaque))
            guard self.datasetNames.indices.contains(index), self.datasetNames[index] != self.session?.dataset.name else { return }
            do { try self.open(datasetNamed: self.datasetNames[index]) } catch { self.showError("\(error)") }
        }
        Signal.connect(sortChoice.object, "notify::selected") { [weak self] (_: gpointer?) in
            guard let self, !self.isSettingChoices else { return }
            let index = Int(gtk_drop_down_get_selected(self.sortChoice.opaque))
            self.perform { try $0.apply(sortOption: index) }
        }
        Signal.connect(searchEntry.object, "search-changed") { [weak self] in
            guard let self, !self.isSettingChoices else { return }
            let text = String(cString: gtk_editable_get_text(OpaquePointer(self.searchEntry)))
            self.perform { try $0.apply(searchText: text) }
        }
    }

    /// Enter on a row edits the selected object. GtkListView's rows take Enter as `activate`,
    /// which is a tap here: a key controller on the list, in the capture phase, sees the key
    /// first, opens the Edit dialog and stops it. Enter on a widget inside a row (its +1 or
    /// check button) is left to that widget.
    private func addEnterEdits() {
        let controller = gtk_event_controller_key_new()!
        gtk_event_controller_set_propagation_phase(controller, GTK_PHASE_CAPTURE)
        Signal.connect(UnsafeMutableRawPointer(controller), "key-pressed") { [weak self] (keyval: guint, _: guint, state: GdkModifierType) -> Bool in
            guard let self, [GDK_KEY_Return, GDK_KEY_KP_Enter, GDK_KEY_ISO_Enter].map(guint.init).contains(keyval),
                  state.rawValue & (GDK_CONTROL_MASK.rawValue | GDK_ALT_MASK.rawValue | GDK_SHIFT_MASK.rawValue) == 0,
                  let focus = gtk_root_get_focus(OpaquePointer(self.window)),
                  focus == self.listView || String(cString: gtk_widget_get_css_name(focus)) == "row" else { return false }
            self.showEditDialog()
            return true
        }
        gtk_widget_add_controller(listView, controller)
        enterController = controller
    }

    private func addShortcuts() {
        // Handled when the key reaches the window, after the focused widget: Delete and
        // Ctrl+Z in the search entry edit its text.
        let controller = gtk_shortcut_controller_new()!
        Shortcut.add(to: controller, "<Control>n") { [weak self] in self?.showAddDialog() }
        Shortcut.add(to: controller, "<Control>e") { [weak self] in self?.showEditDialog() }
        Shortcut.add(to: controller, "Delete") { [weak self] in self?.deleteSelection() }
        Shortcut.add(to: controller, "<Control>o") { [weak self] in self?.chooseImportFile() }
        Shortcut.add(to: controller, "<Control>z") { [weak self] in self?.undo() }
        Shortcut.add(to: controller, "<Control>f") { [weak self] in
            guard let self, self.searchEntry.isVisible else { return }
            gtk_widget_grab_focus(self.searchEntry)
        }
        Shortcut.add(to: controller, "<Control>w") { [weak self] in
            guard let self else { return }
            gtk_window_close(self.window.cast())
        }
        Shortcut.add(to: controller, "<Control>q") { [weak self] in
            guard let self else { return }
            gtk_window_close(self.window.cast())
        }
        gtk_widget_add_controller(window, controller)
    }

    // MARK: Editing

    /// Opens the Add dialog (when the dataset has `addFields`).
    func showAddDialog() {
        guard let session, addButton.isVisible else { return }
        present(ObjectDialog(session: session, mode: .add(section: session.sectionObjectForNewRow()), parent: window))
    }

    /// Opens the Edit dialog on the selected object (when the dataset has `editFields`).
    func showEditDialog() {
        guard let session, editButton.isVisible, let object = session.selection.selectedObject else { return }
        present(ObjectDialog(session: session, mode: .edit(object), parent: window))
    }

    private func present(_ dialog: ObjectDialog) {
        dialog.didSave = { [weak self] object in
            self?.followsSelectionOnce = true
            self?.session?.selection.select(object)
            self?.updateButtons()
        }
        self.dialog = dialog
        dialog.present()
    }

    // MARK: Importing

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
    /// Without a `chunkSize`, chunks of 1,000 records, the first ones smaller: GTK 4.8 keeps
    /// row widgets for about 200 rows around the visible ones, and while the list is short
    /// most rows of a chunk land among them, each a row widget to make, bind and measure.
    /// Chunks that grow from 25 records keep that under a few dozen rows a chunk, so the
    /// main loop never stalls for long (the benchmark's `--only live`).
    public func startImport(file: URL, chunkSize: Int? = nil) {
        guard let session else { return }
        importBar.start(file: file, entityName: session.controller.fetchRequest.entityName, store: session.context.store,
                        chunkSize: chunkSize ?? 1000, firstChunkSize: chunkSize == nil ? 25 : nil)
    }

    /// Whether an import runs now.
    public var isImporting: Bool { importBar.isRunning }

    /// The number of objects the list shows.
    public var listedObjectCount: Int { session?.controller.numberOfObjects ?? 0 }

    /// Deletes the selected object; Undo brings it back.
    func deleteSelection() {
        guard let object = session?.selection.selectedObject else { return }
        perform { try $0.delete(object) }
    }

    /// Reverts the last saved edit and selects what it brought back.
    func undo() {
        perform { session in
            if let object = try session.undo() { session.selection.select(object) }
        }
    }

    private func updateButtons() {
        let selected = session?.selection.selectedObject != nil
        gtk_widget_set_sensitive(editButton, selected ? 1 : 0)
        gtk_widget_set_sensitive(deleteButton, selected ? 1 : 0)
        gtk_widget_set_sensitive(undoButton, session?.undoStack.isEmpty == false ? 1 : 0)
    }

    private func selectionChanged(_ event: FetchedResultsSelection<ManagedObject>.Event) {
        switch event {
        case .selected:
            notice = nil
        case .followed:
            guard followsSelectionOnce else { break }
            followsSelectionOnce = false
            keepFocusOnSelection()
            revealSectionHeader()
        case .removed(let object, _):
            // A deleted object's values are gone: its title as last shown.
            let name = selectedTitle ?? object.objectID.description
            let gone = object.isDeleted || object.managedObjectContext == nil
            notice = gone ? "“\(name)” was deleted." : "“\(name)” is no longer in the list."
            keepFocusOnSelection()
        }
        refreshDetail()
    }

    /// Moves the keyboard focus (where the arrows and Enter start) to the selected row when the list has
    /// it: GTK's focus stays at the old position when the selected row moves, so the arrows
    /// would move on from whichever team took its place.
    private func keepFocusOnSelection(retry: Bool = true) {
        guard let session, let object = session.selection.selectedObject, let position = session.selection.selectedPosition else { return }
        let focus = gtk_root_get_focus(OpaquePointer(window))
        guard focus == nil || gtk_widget_is_ancestor(focus, listView) != 0 || focus == listView else { return }
        if let row = factory?.rowWidget(showing: object.objectID), gtk_widget_get_mapped(row) != 0 {
            gtk_widget_grab_focus(row)  // GTK scrolls to the focused row when it is out of view
        } else if retry {
            // A row far away gets its widget once GTK has scrolled to it and laid the list out.
            gtk_widget_activate_action_variant(listView, "list.scroll-to-item", g_variant_new_uint32(guint32(position)))
            MainLoop.idle(priority: G_PRIORITY_DEFAULT_IDLE) { [weak self] in self?.keepFocusOnSelection(retry: false) }
        }
    }

    /// Scrolls the header of the selected row's section into view when the row is the
    /// section's first: GTK keeps a moved row where the list was anchored, which can leave
    /// the header of its new place just above the top.
    private func revealSectionHeader() {
        guard let session, let position = session.selection.selectedPosition, let indexPath = session.rows.indexPath(at: position),
              indexPath.item == 0, let header = session.rows.position(forSectionHeader: indexPath.section) else { return }
        gtk_widget_activate_action_variant(listView, "list.scroll-to-item", g_variant_new_uint32(guint32(header)))
    }

    private func refreshDetail() {
        let object = session?.selection.selectedObject
        if let object, let session, !object.isDeleted, object.managedObjectContext != nil {
            selectedTitle = ViewConfiguration.render(session.view.row.title, for: object)
        }
        detail.show(object, view: session?.view, notice: notice)
        updateButtons()
        didUpdate?()
    }

    // MARK: Errors

    /// Runs an edit now; a failure shows in the banner.
    private func perform(_ edit: (DatasetSession) throws -> Void) {
        guard let session else { return }
        followsSelectionOnce = true
        do {
            try edit(session)
            showError(nil)
        } catch let error as StoreError where error.kind == .busy {
            showError("another program is writing to the store. Your change is kept and saved as soon as it has finished", prefix: "Not saved yet")
        } catch {
            showError("\(error)")
        }
    }

    /// Runs an edit once the signal that asked for it is done: a save changes the list, and
    /// the row whose button was clicked may be rebound or removed.
    private func later(_ edit: @escaping (DatasetSession) throws -> Void) {
        MainLoop.idle(priority: G_PRIORITY_DEFAULT) { [weak self] in self?.perform(edit) }
    }

    private func showError(_ message: String?, prefix: String = "Not saved") {
        gtk_label_set_text(banner.opaque, message.map { "\(prefix): \($0)" } ?? "")
        banner.isVisible = message != nil
    }

    // MARK: Reading it back

    /// What the window shows, as text: the title, the list's rows (headers in brackets, the
    /// selected row marked with `>`), and the detail pane. For tests and `--dump`.
    public var textDump: String {
        guard let session else { return "" }
        var lines = ["title: \(String(cString: gtk_window_get_title(window.cast())))"]
        let selected = session.selection.selectedPosition
        for position in 0..<session.rows.count {
            if let object = session.object(atPosition: position) {
                let view = session.view
                let subtitle = view.row.subtitle.map { " · " + ViewConfiguration.render($0, for: object) } ?? ""
                let check = view.toggle.map { object.attributeValue(forKey: $0) == .bool(true) ? "[x] " : "[ ] " } ?? ""
                lines.append("\(position == selected ? ">" : " ") \(check)\(ViewConfiguration.render(view.row.title, for: object))\(subtitle)")
            } else if case .header(let section) = session.rows.item(at: position) {
                lines.append("[\(session.view.sectionTitle(forSectionName: session.controller.sections![section].name))]")
            }
        }
        lines.append("detail:")
        lines += detail.text.split(separator: "\n").map { "  " + $0 }
        return lines.joined(separator: "\n")
    }

    /// Where the rows GTK shows are: one `TITLE @ x y width height` line each, in the
    /// coordinates of the window's surface (its X window), for driving it from outside with xdotool.
    public var layoutDump: String {
        guard let native = gtk_widget_get_native(window) else { return "" }
        var surfaceX = 0.0, surfaceY = 0.0
        gtk_native_get_surface_transform(native, &surfaceX, &surfaceY)
        return listView.descendants.filter { gtk_widget_has_css_class($0, "object-row") != 0 && gtk_widget_get_mapped($0) != 0 }
            .compactMap { row -> String? in
                guard let title = row.descendants.first(where: { gtk_widget_has_css_class($0, "row-title") != 0 }) else { return nil }
                var bounds = graphene_rect_t()
                guard gtk_widget_compute_bounds(row, window, &bounds) != 0 else { return nil }
                let x = Int(Double(bounds.origin.x) + surfaceX), y = Int(Double(bounds.origin.y) + surfaceY)
                return "\(labelText(title)) @ \(x) \(y) \(Int(bounds.size.width)) \(Int(bounds.size.height))"
            }
            .joined(separator: "\n")
    }

    // MARK: Widgets

    private static func stringList(_ strings: [String]) -> OpaquePointer {
        let list = gtk_string_list_new(nil)!
        for string in strings { gtk_string_list_append(list, string) }
        return list
    }

    private static func makeButton(icon: String, tooltip: String) -> Widget {
        let button = gtk_button_new_from_icon_name(icon)!
        gtk_widget_set_tooltip_text(button, tooltip)
        return button
    }

    private static func makeDropDown(_ strings: [String]) -> Widget {
        gtk_drop_down_new(stringList(strings), nil)
    }
}
