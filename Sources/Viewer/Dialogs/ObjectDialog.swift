import CGtk
import Datasets
import Foundation
import ObjectStore

/// The Add and Edit dialogs: a modal window (GtkDialog is deprecated from GTK 4.10) with the
/// dataset's fields. Save sets the values and saves the context; when the save is refused
/// the dialog stays open with the message and everything the person typed, and nothing is
/// changed.
final class ObjectDialog {
    enum Mode {
        /// A new object; with sections from their own entity, in `section` (the section object).
        case add(section: ManagedObject?)
        /// The values of this object.
        case edit(ManagedObject)
    }

    let window: Widget
    let editors: [FieldEditor]
    let message: Widget
    /// The window's key controller: Escape cancels.
    let keyController: OpaquePointer
    private let mode: Mode
    private weak var session: DatasetSession?
    /// Called with the saved object, just before the dialog closes.
    var didSave: ((ManagedObject) -> Void)?
    /// False once the dialog's window is destroyed (saved or cancelled).
    private(set) var isOpen = true

    init(session: DatasetSession, mode: Mode, parent: UnsafeMutablePointer<GtkWidget>) {
        self.session = session
        self.mode = mode
        let view = session.view
        let entity = session.controller.fetchRequest.entityName
        let entityDescription = session.context.model.entity(named: entity)
        let fields: [ViewConfiguration.Field]
        switch mode {
        case .add: fields = view.addFields ?? []
        case .edit: fields = view.editFields ?? []
        }
        editors = fields.compactMap { field in entityDescription?.attribute(named: field.key).map { FieldEditor(field: field, attribute: $0) } }

        window = gtk_window_new()
        gtk_window_set_modal(window.cast(), 1)
        gtk_window_set_transient_for(window.cast(), parent.cast())
        gtk_window_set_destroy_with_parent(window.cast(), 1)
        gtk_window_set_default_size(window.cast(), 420, -1)
        let noun = DetailPane.label(forKey: entity)
        switch mode {
        case .add: gtk_window_set_title(window.cast(), "Add \(noun)")
        case .edit: gtk_window_set_title(window.cast(), "Edit \(noun)")
        }

        let header = gtk_header_bar_new()!
        gtk_header_bar_set_show_title_buttons(header.opaque, 0)
        let cancel = gtk_button_new_with_mnemonic("_Cancel")!
        let save = gtk_button_new_with_mnemonic(mode.isAdd ? "_Add" : "_Save")!
        save.addClass("suggested-action")
        gtk_header_bar_pack_start(header.opaque, cancel)
        gtk_header_bar_pack_end(header.opaque, save)
        gtk_window_set_titlebar(window.cast(), header)
        gtk_window_set_default_widget(window.cast(), save)

        let grid = gtk_grid_new()!
        gtk_grid_set_row_spacing(grid.cast(), 12)
        gtk_grid_set_column_spacing(grid.cast(), 12)
        for (row, editor) in editors.enumerated() {
            gtk_grid_attach(grid.cast(), editor.label, 0, Int32(row), 1, 1)
            gtk_grid_attach(grid.cast(), editor.widget, 1, Int32(row), 1, 1)
            if case .edit(let object) = mode { editor.show(object) }
        }
        message = makeLabel(classes: ["dialog-error"])
        gtk_label_set_wrap(message.opaque, 1)
        message.isVisible = false
        let content = makeBox(GTK_ORIENTATION_VERTICAL, spacing: 12, [message, grid])
        content.addClass("dialog-content")
        gtk_window_set_child(window.cast(), content)

        let keys = gtk_event_controller_key_new()!
        keyController = keys
        // The buttons' handlers keep the dialog alive until its window is destroyed.
        Signal.connect(cancel.object, "clicked") { [self] in gtk_window_destroy(window.cast()) }
        Signal.connect(save.object, "clicked") { [self] in self.save() }
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

    /// Sets the values and saves; on failure shows why and changes nothing.
    func save() {
        guard isOpen, let session else { return }
        let context = session.context
        do {
            let values = try editors.map { ($0.field.key, try $0.value()) }
            let object: ManagedObject
            switch mode {
            case .add(let section):
                object = try context.insert(entityName: session.controller.fetchRequest.entityName)
                if let section, let inverse = session.sectionRelationshipKey { try object.setValue(section, forKey: inverse) }
            case .edit(let edited):
                object = edited
            }
            let restore = mode.isAdd ? nil : UndoEntry.restoring(values.map(\.0), of: object)
            for (key, value) in values { try object.setValue(value, forKey: key) }
            try context.save()
            session.pushUndo(restore ?? .remove(object.objectID))
            didSave?(object)
            gtk_window_destroy(window.cast())
        } catch {
            context.rollback()
            show(error)
        }
    }

    /// The error in words, naming the fields by their labels: "Team Name must not be empty".
    private func show(_ error: any Error) {
        let text: String
        if let validation = error as? ValidationError {
            text = validation.failures.map { failure in
                let label = editors.first { $0.field.key == failure.key }?.title ?? failure.key.map(DetailPane.label(forKey:)) ?? "It"
                return "\(label) \(failure.message)."
            }.joined(separator: "\n")
        } else {
            text = "\(error)"
        }
        gtk_label_set_text(message.opaque, text)
        message.isVisible = true
    }
}

extension ObjectDialog.Mode {
    var isAdd: Bool { if case .add = self { true } else { false } }
}
