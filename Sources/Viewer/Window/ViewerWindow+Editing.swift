import CAdw
import CGtk
import GtkBinding

/// The Add and Edit dialogs, Delete and Undo, and how an edit's failure shows (the banner).
extension ViewerWindow {
    /// Opens the Add dialog (when the dataset has `addFields`).
    func showAddDialog() {
        guard let session, addButton.isVisible, !refusesEdits() else { return }
        present(ObjectDialog(session: session, mode: .add(section: session.sectionObjectForNewRow()), parent: window))
    }

    /// Opens the Edit dialog on the selected object (when the dataset has `editFields`).
    func showEditDialog() {
        applyPendingMove()
        guard let session, editButton.isVisible, let object = session.selection.selectedObject, !refusesEdits() else { return }
        present(ObjectDialog(session: session, mode: .edit(object), parent: window))
    }

    /// Shows `dialog`; what it saves becomes the selection. Opened from the list, it gives
    /// the keyboard focus back to the selected row when it closes: GTK 4.8 may have given
    /// the window's focus to the header's first button meanwhile (the edited row's widget
    /// rebound), where Enter would open Add instead of editing the row again.
    private func present(_ dialog: ObjectDialog) {
        dialog.didSave = { [weak self] object in
            self?.followsSelectionOnce = true
            self?.session?.selection.select(object)
            self?.updateButtons()
        }
        let focus = gtk_root_get_focus(OpaquePointer(window))
        if let focus, gtk_widget_is_ancestor(focus, listView) != 0 || focus == listView {
            Signal.connect(dialog.window.object, "destroy") { [weak self] in
                MainLoop.idle { [weak self] in
                    self?.focusLostWithItsRow = true
                    self?.keepFocusOnSelection(retry: false)
                }
            }
        }
        self.dialog = dialog
        dialog.present()
    }

    /// Deletes the selected object, or the objects selected together (one toast, one Undo
    /// brings them all back).
    func deleteSelection() {
        applyPendingMove()
        guard let session, let object = session.selection.selectedObject else { return }
        let count = session.selection.selectedCount
        guard count > 1 else { return perform { try $0.delete(object) } }
        // Each object deleted is read, and kept for Undo: a million (Ctrl+A on a long list)
        // would hold the window for a minute. Said, not done.
        guard count <= deleteLimit else {
            return showToast("\(count.formatted()) \(session.rowNoun(count)) are selected: delete at most \(deleteLimit.formatted()) at once")
        }
        let objects = session.selection.selectedObjects
        rowsDeletedTogether = Set(objects.map(\.objectID))
        perform { session in
            try session.delete(objects)
            showToast("\(objects.count.formatted()) \(session.rowNoun(objects.count)) deleted", undo: true)
        }
        MainLoop.idle { [weak self] in self?.rowsDeletedTogether = [] }
    }

    /// Reverts the last saved edit and selects what it brought back (a row: not a section
    /// object, such as a list shared again, which would leave no row selected).
    func undo() {
        perform { session in
            if let object = try session.edits.undo(), object.entity.name == session.controller.fetchRequest.entityName {
                session.selection.select(object)
            }
        }
    }

    /// Edit and Delete need a selected object; Undo a saved edit.
    func updateButtons() {
        let selected = session?.selection.selectedObject != nil, writable = readOnlyReason == nil
        let several = (session?.selection.selectedCount ?? 0) > 1
        gtk_widget_set_sensitive(addButton, writable ? 1 : 0)
        // Edit shows one object: not while several are selected.
        gtk_widget_set_sensitive(editButton, selected && !several && writable ? 1 : 0)
        gtk_widget_set_sensitive(deleteButton, selected && writable ? 1 : 0)
        gtk_widget_set_sensitive(undoButton, session?.edits.canUndo == true && writable ? 1 : 0)
        // The selected row's section: shared or not, and whether there is one to share.
        let section = session?.selection.selectedObject.flatMap { object in session?.section(of: object) }
        let sharedKey = session?.sectionSharedKey
        Action.setEnabled(sectionSharingAction, section != nil && sharedKey != nil && writable)
        for action in [sectionActions.renameSelected, sectionActions.deleteSelected] { Action.setEnabled(action, section != nil && writable) }
        for action in [sectionActions.new, sectionActions.rename, sectionActions.delete] { Action.setEnabled(action, writable) }
        Action.setOn(sectionSharingAction, sharedKey.map { section?.attributeValue(forKey: $0) == .bool(true) } ?? false)
    }

    /// Why the list may not be edited here: the server lets this desktop's role only read
    /// it (edits would stay in this store, never shared); nil when it may be.
    var readOnlyReason: String? { session?.sharing?.status.readOnlyReason }

    /// Whether edits are refused (the list is read-only on its server), saying so in a toast.
    func refusesEdits() -> Bool {
        guard let reason = readOnlyReason else { return false }
        showToast("Read-only: \(reason)")
        return true
    }

    /// Runs an edit now; a failure shows in the banner (``Edits`` decides what it leaves:
    /// a busy store keeps the change). When `followsSelection`, the list keeps the selected
    /// row in view (and the focus on it) if the edit moves it; an edit of another row (a
    /// check box ticked far from the selection) leaves the view where it is.
    func perform(followsSelection: Bool = true, _ edit: (DatasetSession) throws -> Void) {
        guard let session, !refusesEdits() else { return }
        followsSelectionOnce = followsSelection
        do {
            try edit(session)
            showError(nil)
        } catch where Edits.keepsChanges(after: error) {
            showError("another program is writing to the store. Your change is kept and saved as soon as it has finished", prefix: "Not saved yet")
        } catch {
            showError("\(error)")
        }
    }

    /// Runs an edit once the signal that asked for it is done: a save changes the list, and
    /// the row whose button was clicked may be rebound or removed.
    func later(followsSelection: Bool = true, _ edit: @escaping (DatasetSession) throws -> Void) {
        MainLoop.idle(priority: G_PRIORITY_DEFAULT) { [weak self] in self?.perform(followsSelection: followsSelection, edit) }
    }

    /// Shows a toast saying `text`, with an Undo button (`win.undo`) when `undo`, else a
    /// button for `action` (a label and a detailed action name) when given; `dismissed` is
    /// called when it goes.
    func showToast(_ text: String, undo: Bool = false, action: (label: String, name: String)? = nil, dismissed: (() -> Void)? = nil) {
        let toast = adw_toast_new(text)!
        if let (label, name) = undo ? ("_Undo", "win.undo") : action {
            adw_toast_set_button_label(toast, label)
            adw_toast_set_detailed_action_name(toast, name)
        }
        shownToast = text
        Signal.connect(UnsafeMutableRawPointer(toast), "dismissed") { [weak self] () -> Void in
            if self?.shownToast == text { self?.shownToast = nil }
            dismissed?()
        }
        adw_toast_overlay_add_toast(toastOverlay.opaque, toast)
    }

    /// Shows `message` in the banner, or hides the banner (nil).
    func showError(_ message: String?, prefix: String = "Not saved") {
        gtk_label_set_text(banner.opaque, message.map { "\(prefix): \($0)" } ?? "")
        banner.isVisible = message != nil
    }
}
