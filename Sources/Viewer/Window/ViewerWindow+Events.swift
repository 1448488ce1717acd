import CGtk
import GtkBinding

/// What the window does on a signal, a key or a shortcut.
extension ViewerWindow {
    /// The header bar's buttons and choices, the list's activation and the import bar.
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
            self.perform { try $0.apply(sortOption: index, shown: self.reportFetchFailure) }
        }
        Signal.connect(searchEntry.object, "search-changed") { [weak self] in
            guard let self, !self.isSettingChoices else { return }
            let text = String(cString: gtk_editable_get_text(OpaquePointer(self.searchEntry)))
            self.perform { try $0.apply(searchText: text, shown: self.reportFetchFailure) }
        }
    }

    /// Says why a search or sort could not be shown.
    func reportFetchFailure(_ error: Error?) {
        if let error { showError("\(error)", prefix: "Cannot show the rows") }
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
}
