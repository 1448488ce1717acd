import CAdw
import CGtk
import Foundation
import GtkBinding
import ObjectStore

/// What the window does on a signal, a key or a shortcut.
extension ViewerWindow {
    /// The header bars' buttons and choices, the search bar, the list's activation and the import bar.
    func connectSignals() {
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
        Signal.connect(backButton.object, "clicked") { [weak self] in
            guard let self else { return }
            _ = adw_leaflet_navigate(self.leaflet.opaque, ADW_NAVIGATION_DIRECTION_BACK)
        }
        // One import at a time, into the dataset it started in.
        importBar.didChangeState = { [weak self] in
            guard let self else { return }
            Action.setEnabled(self.importAction, !self.importBar.isRunning)
            gtk_widget_set_sensitive(self.datasetChoice, self.importBar.isRunning ? 0 : 1)
        }
        Signal.connect(window.object, "destroy") { [weak self] () -> Void in
            self?.importBar.windowClosed()
            self?.forgetSession()
        }
        Signal.connect(datasetChoice.object, "notify::selected") { [weak self] (_: gpointer?) in
            guard let self, !self.isSettingChoices else { return }
            let index = Int(gtk_drop_down_get_selected(self.datasetChoice.opaque))
            guard self.datasetNames.indices.contains(index), self.datasetNames[index] != self.session?.dataset.name else { return }
            do { try self.open(datasetNamed: self.datasetNames[index]) } catch { self.showError("\(error)") }
        }
        connectSearchSignals()
        // Folded to one pane, a click on a row shows its details (Back returns to the list).
        let click = gtk_gesture_click_new()!
        gtk_gesture_single_set_button(click, guint(GDK_BUTTON_PRIMARY))
        Signal.connect(UnsafeMutableRawPointer(click), "released") { [weak self] (presses: guint) in
            guard let self, presses == 1, adw_leaflet_get_folded(self.leaflet.opaque) != 0, self.session?.selection.selectedObject != nil else { return }
            adw_leaflet_set_visible_child(self.leaflet.opaque, self.detailPane)
        }
        gtk_widget_add_controller(listView, click)
    }

    /// The search entry: a search as the text changes, Down to the rows, Escape ends it.
    private func connectSearchSignals() {
        Signal.connect(searchEntry.object, "search-changed") { [weak self] in
            guard let self, !self.isSettingChoices else { return }
            let text = String(cString: gtk_editable_get_text(OpaquePointer(self.searchEntry)))
            let selected = self.session?.selection.selectedObject?.objectID
            self.showRows(searchText: text) { [weak self] in self?.landSearch(keeping: selected) }
        }
        // Down in the search entry goes to the rows: the selected one (a search selects
        // its first match), where Enter edits and the arrows go on. GtkText would move the
        // focus to the next widget, the list's unnamed scroll pane.
        let down = gtk_event_controller_key_new()!
        gtk_event_controller_set_propagation_phase(down, GTK_PHASE_CAPTURE)
        Signal.connect(UnsafeMutableRawPointer(down), "key-pressed") { [weak self] (keyval: guint, _: guint, state: GdkModifierType) -> Bool in
            guard let self, [GDK_KEY_Down, GDK_KEY_KP_Down].map(guint.init).contains(keyval),
                  state.rawValue & (GDK_CONTROL_MASK.rawValue | GDK_ALT_MASK.rawValue | GDK_SHIFT_MASK.rawValue) == 0 else { return false }
            return self.focusSelectedRow()
        }
        gtk_widget_add_controller(searchEntry, down)
        // Escape in the search clears it and closes the bar (GtkSearchBar empties its entry
        // when it closes); the focus goes back to the list.
        Signal.connect(searchEntry.object, "stop-search") { [weak self] in _ = self?.endSearch() }
    }

    /// The window's actions: `win.sort` (an integer state: the dataset's sort order),
    /// `win.undo` (for the toasts' Undo), `win.about`, `win.show-help-overlay`. Returns `win.sort`.
    func addActions() -> OpaquePointer {
        let map: UnsafeMutableRawPointer = actionMap
        Action.add(to: map, "undo") { [weak self] _ in self?.undo() }
        Action.add(to: map, "about") { [weak self] _ in self?.showAbout() }
        Action.add(to: map, "show-help-overlay") { [weak self] _ in self?.showShortcuts() }
        Action.add(to: map, "help") { [weak self] _ in self?.showHelp() }
        return Action.add(to: map, "sort", state: 0) { [weak self] parameter in
            guard let self, let parameter, !self.isSettingChoices else { return }
            self.showRows(sortOption: Int(g_variant_get_int32(parameter)))
        }
    }

    /// The primary menu: the dataset's sort orders (radio items of `win.sort`); where
    /// sections are objects (`sectionWord`: "List"), New List…, Rename List…, Delete List and
    /// (`sectionSharing`) List Shared With Everyone; Import, Share and Stop Sharing, and
    /// Keyboard Shortcuts and About.
    func setMenu(sortTitles: [String], sectionWord: String? = nil, sectionSharing: Bool = false) {
        func model(_ menu: OpaquePointer) -> UnsafeMutablePointer<GMenuModel> {
            UnsafeMutableRawPointer(menu).assumingMemoryBound(to: GMenuModel.self)
        }
        let menu = g_menu_new()!
        // A section of (label, action) items, with a title or none.
        func appendSection(_ title: String?, _ items: [(String, String)]) {
            let section = g_menu_new()!
            for (label, action) in items { g_menu_append(section, label, action) }
            g_menu_append_section(menu, title, model(section))
            g_object_unref(UnsafeMutableRawPointer(section))
        }
        if sortTitles.count > 1 {
            appendSection("Sort", sortTitles.enumerated().map { ($0.element, "win.sort(\($0.offset))") })
        }
        if let sectionWord {
            appendSection(nil, [("_New \(sectionWord)…", "win.new-section"), ("_Rename \(sectionWord)…", "win.rename-selected-section"),
                                ("_Delete \(sectionWord)", "win.delete-selected-section")]
                          + (sectionSharing ? [("\(sectionWord) Shared With _Everyone", "win.share-section")] : []))
        }
        appendSection(nil, [("_Import…", "win.import"), ("_Share…", "win.share"), ("Stop S_haring", "win.stop-sharing")])
        appendSection(nil, [("_Keyboard Shortcuts", "win.show-help-overlay"), ("_Help", "win.help"), ("_About Fetched Results", "win.about")])
        gtk_menu_button_set_menu_model(menuButton.opaque, model(menu))
        g_object_unref(UnsafeMutableRawPointer(menu))
    }

    /// Shows the rows of another search text or sort order: fetched off the main loop, with
    /// ``fetchProgress`` shown until they are; then `landed`. Not an edit: a read-only
    /// desktop searches and sorts too.
    func showRows(sortOption: Int? = nil, searchText: String? = nil, landed: @escaping () -> Void = {}) {
        guard let session else { return }
        // As after an edit: the selected row, moved by the new order, is brought into view.
        followsSelectionOnce = true
        let fetching = fetchProgress.begin(dimming: listStack)
        do {
            try session.apply(sortOption: sortOption, searchText: searchText) { [weak self] error in
                self?.fetchProgress.end(fetching)
                self?.reportFetchFailure(error)
                if error == nil { landed() }
            }
        } catch {
            fetchProgress.end(fetching)
            reportFetchFailure(error)
        }
    }

    /// Says why a search or sort could not be shown.
    func reportFetchFailure(_ error: Error?) {
        if let error { showError("\(error)", prefix: "Cannot show the rows") }
    }

    /// Where a search lands once its rows are shown: the object selected before stays
    /// selected when it matches; else the first match is selected, with the list at its top.
    /// (Left to the selection, a search that dropped the selected row selected the row
    /// nearest its old position: in a short result, the last match, at the bottom.)
    func landSearch(keeping id: ObjectID?) {
        guard let session else { return }
        if let id, session.controller.indexPath(forObjectID: id) != nil { return }
        guard let section = session.controller.sections?.first, section.numberOfObjects > 0 else { return }
        let first = IndexPath(item: 0, section: 0)
        session.selection.select(session.controller.object(at: first))
        gtk_widget_activate_action_variant(listView, "list.scroll-to-item", g_variant_new_uint32(0))
    }

    /// Adds to the selected object's counter, where the dataset has one; false when there
    /// is none to add to.
    func incrementSelectedCounter() -> Bool {
        guard let session, session.view.counter != nil, let object = session.selection.selectedObject else { return false }
        later { try $0.incrementCounter(of: object) }
        return true
    }

    /// Ends the search, if one is shown: the bar closes (emptying its entry, so every row is
    /// back) and the list takes the focus. False when there was none.
    func endSearch() -> Bool {
        guard gtk_search_bar_get_search_mode(searchBar.opaque) != 0 else { return false }
        gtk_search_bar_set_search_mode(searchBar.opaque, 0)
        gtk_widget_grab_focus(listView)
        return true
    }

    /// Gives the keyboard focus to the selected row (the first row when none is selected);
    /// false when the list has no row to take it.
    func focusSelectedRow() -> Bool {
        guard let session, let section = session.controller.sections?.first, section.numberOfObjects > 0 else { return false }
        if session.selection.selectedObject == nil { session.selection.select(session.controller.object(at: IndexPath(item: 0, section: 0))) }
        // As when the focused row moved: the row gets the focus, brought into view first
        // when it is out of it.
        focusLostWithItsRow = true
        keepFocusOnSelection()
        return true
    }

    /// Enter on a row edits the selected object. GtkListView's rows take Enter as `activate`,
    /// which is a tap here: a key controller on the list, in the capture phase, sees the key
    /// first, opens the Edit dialog and stops it. Enter on a widget inside a row (its +1 or
    /// check button) is left to that widget. Returns the controller.
    func addEnterEdits() -> OpaquePointer {
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
        return controller
    }

    /// The window's keyboard shortcuts (see the type's description).
    func addShortcuts() {
        // Handled when the key reaches the window, after the focused widget: Delete and
        // Ctrl+Z in the search entry edit its text.
        let controller = gtk_shortcut_controller_new()!
        Shortcut.add(to: controller, "<Control>n") { [weak self] in self?.showAddDialog() }
        Shortcut.add(to: controller, "<Control>e") { [weak self] in self?.showEditDialog() }
        Shortcut.add(to: controller, "Delete") { [weak self] in self?.deleteSelection() }
        Shortcut.add(to: controller, "<Control>o") { [weak self] in self?.chooseImportFile() }
        Shortcut.add(to: controller, "<Control>z") { [weak self] in self?.undo() }
        Shortcut.add(to: controller, "<Control>f") { [weak self] in
            guard let self, self.searchButton.isVisible else { return }
            gtk_search_bar_set_search_mode(self.searchBar.opaque, 1)
            gtk_widget_grab_focus(self.searchEntry)
        }
        Shortcut.add(to: controller, "<Control>question") { [weak self] in self?.showShortcuts() }
        Shortcut.add(to: controller, "F1") { [weak self] in self?.showHelp() }
        // + adds to the selected row's counter, as its +1 button does (in the search entry,
        // the key types a +).
        for key in ["plus", "KP_Add"] {
            Shortcut.add(to: controller, key, handling: { [weak self] in self?.incrementSelectedCounter() ?? false })
        }
        // Escape where the focus leaves it alone (the detail pane, the list) ends a search.
        Shortcut.add(to: controller, "Escape", handling: { [weak self] in self?.endSearch() ?? false })
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
}
