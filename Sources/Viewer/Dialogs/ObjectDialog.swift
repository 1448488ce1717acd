import CAdw
import CGtk
import GtkBinding
import Datasets
import Foundation
import ObjectStore

/// The Add and Edit dialogs: a modal window (GtkDialog is deprecated from GTK 4.10) with the
/// dataset's fields. Save sets the values and saves the context (Edit: only the fields the
/// person changed, so a value nobody touched is never written back); when the save is
/// refused the dialog stays open with the message and everything the person typed, and
/// nothing is changed.
///
/// Edit works in a context of its own that does not follow the store, so the values shown
/// stay what the person started from even when another process changes the object while the
/// dialog is open. Saving then never silently overwrites that change: the save's
/// ``MergePolicy/error`` names the fields, and the dialog offers Reload (show the stored
/// values) or Overwrite (save the person's values over them).
final class ObjectDialog {
    enum Mode {
        /// A new object; with sections from their own entity, in `section` (the section
        /// object the section choice starts at).
        case add(section: ManagedObject?)
        /// The values of this object.
        case edit(ManagedObject)
    }

    let window: Widget
    let editors: [FieldEditor]
    /// With sections from their own entity: which one the object is in.
    let sectionChoice: SectionChoice?
    let message: Widget
    /// Reload and Overwrite, shown when the object changed elsewhere since the dialog opened.
    let conflictButtons: Widget
    let reloadButton: Widget
    let overwriteButton: Widget
    /// The window's key controller: Escape cancels.
    let keyController: OpaquePointer
    private let mode: Mode
    private let view: ViewConfiguration
    private weak var session: DatasetSession?
    /// Edit: the context the dialog edits in, and its copy of the object (nil when the
    /// object was gone when the dialog opened).
    private let editingContext: ObjectContext?
    private let editedObject: ManagedObject?
    /// Called with the saved object, just before the dialog closes.
    var didSave: ((ManagedObject) -> Void)?
    /// False once the dialog's window is destroyed (saved or cancelled).
    private(set) var isOpen = true

    init(session: DatasetSession, mode: Mode, parent: UnsafeMutablePointer<GtkWidget>) {
        self.session = session
        self.mode = mode
        let view = session.view
        self.view = view
        let entity = session.controller.fetchRequest.entityName
        let entityDescription = session.context.model.entity(named: entity)
        let fields: [ViewConfiguration.Field]
        switch mode {
        case .add: fields = view.addFields ?? []
        case .edit: fields = view.editFields ?? []
        }
        // A text field whose values are the sections (World Cup's zone) offers them, and a new one.
        // All of them: the list's sections, or the store's values while a search shows only some.
        let sectionNames = session.searchText.isEmpty ? session.controller.sections?.map(\.name).filter { !$0.isEmpty }
            : view.fetchRequest.sectionKeyPath.flatMap { try? session.context.store.distinctTexts(of: $0, entity: entity) }
        editors = fields.compactMap { field in
            entityDescription?.attribute(named: field.key).map { attribute in
                FieldEditor(field: field, attribute: attribute, title: view.label(forKeyPath: field.key),
                            sectionNames: field.key == view.fetchRequest.sectionKeyPath && view.sectionRequest == nil ? sectionNames : nil)
            }
        }
        if case .edit(let object) = mode {
            let context = ObjectContext(store: session.context.store)
            context.automaticallyMergesChangesFromStore = false
            editingContext = context
            editedObject = try? context.existingObject(with: object.objectID)
        } else {
            editingContext = nil
            editedObject = nil
        }
        sectionChoice = Self.makeSectionChoice(session: session, mode: mode, view: view)
        window = Self.makeWindow(parent: parent, title: "\(mode.isAdd ? "Add" : "Edit") \(ViewConfiguration.words(entity))")
        (message, reloadButton, overwriteButton, conflictButtons) = Self.makeConflictArea()
        keyController = gtk_event_controller_key_new()!
        let (cancel, save) = addHeaderBar()
        let content = makeBox(GTK_ORIENTATION_VERTICAL, spacing: 12, [message, conflictButtons, makeGrid()])
        content.addClass("dialog-content")
        gtk_window_set_child(window.cast(), content)
        connectSignals(cancel: cancel, save: save)
    }

    /// The section picker, when sections come from their own entity: the object's section
    /// (Edit) or the one the person was in (Add) chosen.
    private static func makeSectionChoice(session: DatasetSession, mode: Mode, view: ViewConfiguration) -> SectionChoice? {
        return session.sectionRelationshipKey.map { key in
            let current: ManagedObject?
            switch mode {
            case .add(let section): current = section
            case .edit(let object): current = session.section(of: object)
            }
            return SectionChoice(title: view.label(forKeyPath: key), sections: session.sectionObjects, selected: current?.objectID)
        }
    }

    /// The dialog's window, modal over `parent`.
    private static func makeWindow(parent: UnsafeMutablePointer<GtkWidget>, title: String) -> Widget {
        let window = gtk_window_new()!
        gtk_window_set_modal(window.cast(), 1)
        gtk_window_set_transient_for(window.cast(), parent.cast())
        gtk_window_set_destroy_with_parent(window.cast(), 1)
        // 420 px, or the window's own width when it is narrower (a 360 px phone-sized window).
        let parentWidth = gtk_widget_get_width(parent)
        gtk_window_set_default_size(window.cast(), parentWidth > 0 ? min(420, parentWidth) : 420, -1)
        gtk_window_set_title(window.cast(), title)
        return window
    }

    /// The message shown when a save is refused, and the Reload and Overwrite buttons of a conflict.
    private static func makeConflictArea() -> (message: Widget, reload: Widget, overwrite: Widget, buttons: Widget) {
        let message = makeLabel(classes: ["dialog-error"])
        wrapAnywhere(message)
        message.isVisible = false
        let reloadButton = makeButton(mnemonic: "_Reload")
        gtk_widget_set_tooltip_text(reloadButton, "Show the values saved elsewhere; your changes are discarded")
        let overwriteButton = makeButton(mnemonic: "_Overwrite")
        gtk_widget_set_tooltip_text(overwriteButton, "Save your values over the ones saved elsewhere")
        overwriteButton.addClass("destructive-action")
        let conflictButtons = makeBox(GTK_ORIENTATION_HORIZONTAL, spacing: 6, [reloadButton, overwriteButton])
        gtk_widget_set_halign(conflictButtons, GTK_ALIGN_END)
        conflictButtons.isVisible = false
        return (message, reloadButton, overwriteButton, conflictButtons)
    }

    /// Cancel and Add (or Save), Save the default widget.
    private func addHeaderBar() -> (cancel: Widget, save: Widget) {
        let header = gtk_header_bar_new()!
        gtk_header_bar_set_show_title_buttons(header.opaque, 0)
        let cancel = makeButton(mnemonic: "_Cancel")
        let save = makeButton(mnemonic: mode.isAdd ? "_Add" : "_Save")
        save.addClass("suggested-action")
        gtk_header_bar_pack_start(header.opaque, cancel)
        gtk_header_bar_pack_end(header.opaque, save)
        gtk_window_set_titlebar(window.cast(), header)
        gtk_window_set_default_widget(window.cast(), save)
        return (cancel, save)
    }

    /// A label and an editor a field, showing the object's values (Edit) or the defaults (Add).
    private func makeGrid() -> Widget {
        let grid = gtk_grid_new()!
        gtk_grid_set_row_spacing(grid.cast(), 12)
        gtk_grid_set_column_spacing(grid.cast(), 12)
        for (row, editor) in editors.enumerated() {
            gtk_grid_attach(grid.cast(), editor.label, 0, Int32(row), 1, 1)
            gtk_grid_attach(grid.cast(), editor.widget, 1, Int32(row), 1, 1)
            switch mode {
            case .edit(let object): editor.show(editedObject ?? object)
            case .add:
                editor.showDefault()
                // A section chosen among the list's: the selected row's, as "New List…"'s choice does.
                if editor.choice != nil, let selected = session?.selection.selectedObject {
                    editor.text = ViewConfiguration.text(of: selected, keyPath: editor.field.key)
                }
            }
        }
        if let sectionChoice {
            gtk_grid_attach(grid.cast(), sectionChoice.label, 0, Int32(editors.count), 1, 1)
            gtk_grid_attach(grid.cast(), sectionChoice.widget, 1, Int32(editors.count), 1, 1)
        }
        return grid
    }

    private func connectSignals(cancel: Widget, save: Widget) {
        let keys = keyController
        // The buttons' handlers keep the dialog alive until its window is destroyed.
        Signal.connect(cancel.object, "clicked") { [self] in gtk_window_destroy(window.cast()) }
        Signal.connect(save.object, "clicked") { [self] in self.save() }
        Signal.connect(reloadButton.object, "clicked") { [self] in self.reload() }
        Signal.connect(overwriteButton.object, "clicked") { [self] in self.save(overwriting: true) }
        Signal.connect(window.object, "destroy") { [weak self] in self?.isOpen = false }
        // Escape cancels, as in a dialog (a GtkWindow has no such key of its own).
        Signal.connect(UnsafeMutableRawPointer(keys), "key-pressed") { [self] (keyval: guint, _: guint, _: GdkModifierType) -> Bool in
            guard keyval == guint(GDK_KEY_Escape) else { return false }
            gtk_window_destroy(window.cast())
            return true
        }
        gtk_widget_add_controller(window, keys)
    }

    func present() {
        gtk_window_present(window.cast())
        if let first = editors.first { gtk_widget_grab_focus(first.widget) }
    }

    /// Sets the values and saves; on failure shows why and changes nothing (a busy store
    /// too: the dialog keeps what the person typed). A required text field left empty (or
    /// only spaces) is refused here, highlighted. With `overwriting`, the values replace
    /// those another process saved since the dialog opened.
    func save(overwriting: Bool = false) {
        guard isOpen, let session else { return }
        for editor in editors { editor.setError(false) }
        if let missing = editors.first(where: { $0.isMissing && (mode.isAdd || $0.isChanged) }) {
            return refuse("\(missing.title) must not be empty.", highlighting: missing)
        }
        do {
            let object: ManagedObject
            switch mode {
            case .add:
                object = try session.edits.save(whenBusy: .discard, undoneBy: { .remove($0.objectID) }) {
                    let values = try fieldValues()
                    let object = try session.context.insert(entityName: session.controller.fetchRequest.entityName)
                    for (key, value) in values { try object.setValue(value, forKey: key) }
                    return object
                }
            case .edit(let shown):
                let values = try fieldValues(in: editingContext)
                // Nothing changed: nothing to save, and no Undo that would do nothing.
                guard !values.isEmpty else { return gtk_window_destroy(window.cast()) }
                try session.edits.save(in: editingContext, mergePolicy: overwriting ? .editWins : .error, whenBusy: .discard,
                                       undoneBy: { $0 }) {
                    guard let edited = editedObject else {
                        throw ViewerError("It was deleted elsewhere before this dialog opened. Cancel to close.")
                    }
                    let restore = UndoEntry.restoring(values.map(\.0), of: shown)
                    for (key, value) in values { try edited.setValue(value, forKey: key) }
                    return restore.counting(changesOf: edited)
                }
                object = shown
            }
            didSave?(object)
            gtk_window_destroy(window.cast())
        } catch {
            show(error)
        }
    }

    /// The values the person typed, by key, and the chosen section object (in `context`,
    /// the dataset's when nil); throws for one that is not a value of its field. Edit takes
    /// only the fields the person changed: a value nobody touched is never written back.
    private func fieldValues(in context: ObjectContext? = nil) throws -> [(String, Any?)] {
        var values = try editors.filter { mode.isAdd || $0.isChanged }.map { ($0.field.key, try $0.value()) }
        guard let key = session?.sectionRelationshipKey, let choice = sectionChoice, let context = context ?? session?.context else { return values }
        if choice.newTitle != nil {
            values.append((key, try newSection(from: choice, in: context)))
        } else if let id = choice.selectedID {
            let section = try context.existingObject(with: id)
            // Edit sets it only when another was chosen: a move made elsewhere meanwhile stays.
            if editedObject.flatMap({ session?.section(of: $0) }) !== section { values.append((key, section)) }
        }
        return values
    }

    /// The section object "New List…" asks for, inserted in `context` with the title typed;
    /// refused when the title is empty or names a section there is (but for case).
    private func newSection(from choice: SectionChoice, in context: ObjectContext) throws -> ManagedObject {
        let title = choice.newTitle ?? ""
        if let existing = choice.existingTitleTyped {
            throw ViewerError("\(choice.title) “\(existing)” is there already: choose it in the list instead of typing a new one.")
        }
        guard !title.isEmpty, let request = view.sectionRequest else {
            throw ViewerError("The new \(choice.title.lowercased()) needs a title.")
        }
        let section = try context.insert(entityName: request.entity)
        try section.setValue(title, forKey: request.titleKey)
        return section
    }

    /// Shows the values saved now, dropping what the person typed: the answer to a conflict.
    func reload() {
        guard let editingContext, let editedObject else { return }
        editingContext.refresh(editedObject, mergeChanges: false)
        for editor in editors { editor.show(editedObject) }
        conflictButtons.isVisible = false
        message.isVisible = false
    }

    /// The error in words, naming the fields by their labels: "Team name must not be empty".
    private func show(_ error: any Error) {
        let text: String
        conflictButtons.isVisible = false
        if let invalid = error as? FieldEditor.InvalidValue {
            return refuse(invalid.message, highlighting: invalid.editor)
        } else if let conflict = (error as? MergeConflictError)?.conflicts.first {
            text = describe(conflict)
            conflictButtons.isVisible = !conflict.isDeleted
        } else if let validation = error as? ValidationError {
            text = validation.failures.map { failure in
                let label = failure.key.map(view.label(forKeyPath:)) ?? "It"
                return "\(label) \(failure.message)."
            }.joined(separator: "\n")
            let keys = Set(validation.failures.compactMap(\.key))
            return refuse(text, highlighting: editors.first { keys.contains($0.field.key) })
        } else {
            text = "\(error)"
        }
        refuse(text, highlighting: nil)
    }

    /// Shows why the values were not saved, and the field to correct: highlighted, with the focus.
    private func refuse(_ text: String, highlighting editor: FieldEditor?) {
        gtk_label_set_text(message.opaque, text)
        message.isVisible = true
        guard let editor else { return }
        editor.setError(true)
        gtk_widget_grab_focus(editor.widget)
    }

    /// A conflict in words, naming the fields by their labels.
    private func describe(_ conflict: MergeConflict) -> String {
        let noun = ViewConfiguration.words(view.fetchRequest.entity).lowercased()
        guard !conflict.isDeleted else {
            return "This \(noun) was deleted elsewhere while you were editing it, so your changes cannot be saved. Cancel to close."
        }
        let fields = conflict.fields.map { field in
            return "\(view.label(forKeyPath: field.key)) is now \(Self.text(field.storeValue)) (it was \(Self.text(field.baseValue)) when you opened this; yours: \(Self.text(field.editedValue)))"
        }
        return "This \(noun) was changed elsewhere while you were editing it: \(fields.joined(separator: "; ")). Reload to see the saved values, or Overwrite to save yours over them."
    }

    private static func text(_ value: MergeConflict.FieldValue) -> String {
        switch value {
        case .attribute(.string(let text)): return "“\(text)”"
        case .attribute(.null), .object(nil): return "empty"
        default: return value.description
        }
    }
}

extension ObjectDialog.Mode {
    var isAdd: Bool { if case .add = self { true } else { false } }
}
