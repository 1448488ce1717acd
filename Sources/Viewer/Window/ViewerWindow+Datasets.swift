import CAdw
import CGtk
import CViewer
import Datasets
import GtkBinding

/// Switching datasets: a new session, its sharing, its row factory and its choices.
extension ViewerWindow {
    /// The window closed: its session, rows and anchor go, so that what the session still
    /// hears (its first rows fetched in the background, a change saved elsewhere) touches no
    /// widget of the closed window.
    func forgetSession() {
        // Its sharing ends with it (local commits wait in the store for the next session).
        session?.sharing?.stop()
        contextObservation = nil
        session = nil
        factory = nil
        listAnchor = nil
    }

    /// Shows the dataset `name` instead of the current one.
    package func open(datasetNamed name: String) throws {
        show(try Self.makeSession(datasetNamed: name, options: options))
    }

    /// Opens the dataset `name`'s store and starts fetching its rows.
    static func makeSession(datasetNamed name: String, options: ViewerOptions) throws -> DatasetSession {
        try DatasetSession(dataset: try Dataset.load(named: name), storeURL: options.storeURL(for: name), busyTimeout: options.busyTimeout)
    }

    /// Shows `session`'s dataset instead of the current one.
    func show(_ session: DatasetSession) {
        let dataset = session.dataset
        let notShared = startSharing(session)
        let factory = RowFactory(session: session)
        factory.didToggle = { [weak self] object, isOn in
            let isSelected = self?.session?.selection.selectedObject === object
            self?.later(followsSelection: isSelected) { try $0.setToggle(of: object, to: isOn) }
        }
        factory.sectionMenu = { [weak self] button, name in
            guard let self, let id = self.session?.sectionObjectID(named: name) else { return }
            self.setSectionMenu(of: button, id: id, title: self.session?.view.sectionTitle(forSectionName: name) ?? name)
        }
        factory.didTapCounter = { [weak self] object in
            self?.session?.selection.select(object)
            self?.later { try $0.incrementCounter(of: object) }
        }
        session.selection.didChange = { [weak self] event in self?.selectionChanged(event) }
        // The list's status page follows the rows, whatever changed them.
        Signal.connect(UnsafeMutableRawPointer(session.rows.listModel), "items-changed") { [weak self] (_: guint, _: guint, _: guint) in
            self?.showEmptyState()
            self?.factory?.refreshEmptySections()
            self?.stickyHeader.updateSoon()
        }
        session.edits.keptChangesSaved = { [weak self] in self?.showError(nil) }
        session.didLoad = { [weak self, weak session] error in
            guard let self, let session, self.session === session else { return }
            self.rowsLoaded(error)
        }
        contextObservation = session.context.addObserver { [weak self] _ in self?.refreshDetail() }
        self.session?.sharing?.stop()
        self.session = session
        self.factory = factory
        listAnchor = ListAnchor(listView: listView, factory: factory.items)
        // Without a model first, so that the new factory never binds the old dataset's items.
        gtk_list_view_set_model(listView.opaque, nil)
        gtk_list_view_set_factory(listView.opaque, factory.items.factory)
        gtk_list_view_set_model(listView.opaque, session.selection.selectionModel)
        gtk_window_set_title(window.cast(), dataset.view.title ?? dataset.name)
        // The list reads as the dataset ("World Cup"), not as its class.
        fr_accessible_set_text(listView, GTK_ACCESSIBLE_PROPERTY_LABEL, dataset.view.title ?? dataset.name)
        setChoices(for: dataset)
        showError(notShared, prefix: Self.notShared)
        showSharing()
        selectFirstObject()
    }

    /// Whether the list's first rows are still being fetched (see ``init(application:options:)``).
    package var isLoading: Bool { session?.isLoading ?? false }

    /// The first rows are in (fetched off the main thread when the section cache was not
    /// valid), or could not be fetched.
    private func rowsLoaded(_ error: Error?) {
        showError(error.map { "The rows could not be read: \($0)" })
        showEmptyState()
        if session?.selection.selectedObject == nil { selectFirstObject() }
    }

    /// Selects the first object, so that the detail pane shows something.
    private func selectFirstObject() {
        guard let session else { return }
        let first = (0..<session.rows.count).lazy.compactMap(session.object(atPosition:)).first
        session.selection.select(first)
        if openingFocusTries > 0 { keepFocusOnSelection() }
    }

    private func setChoices(for dataset: Dataset) {
        isSettingChoices = true
        defer { isSettingChoices = false }
        gtk_drop_down_set_selected(datasetChoice.opaque, guint(datasetNames.firstIndex(of: dataset.name) ?? 0))
        setMenu(sortTitles: (dataset.view.sortOptions ?? []).map(\.title), sectionWord: sectionWord,
                sectionSharing: session?.sectionSharedKey != nil)
        g_simple_action_set_state(sortAction, g_variant_new_int32(0))
        gtk_editable_set_text(OpaquePointer(searchEntry), "")
        gtk_search_bar_set_search_mode(searchBar.opaque, 0)
        let searchable = !(dataset.view.searchKeys ?? []).isEmpty
        searchButton.isVisible = searchable
        // Typing starts a search only where there is one.
        gtk_search_bar_set_key_capture_widget(searchBar.opaque, searchable ? window : nil)
        addButton.isVisible = !(dataset.view.addFields ?? []).isEmpty
        editButton.isVisible = !(dataset.view.editFields ?? []).isEmpty
        updateButtons()
    }
}
