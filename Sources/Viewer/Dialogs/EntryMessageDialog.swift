import CAdw
import CGtk
import GtkBinding

/// An `AdwMessageDialog` that asks for one line of text: Cancel and one suggested button
/// (the default, so that Enter in the entry chooses it), the entry under its label, and a
/// message under the entry for what is wrong with the text. Share… and the list title
/// dialogs are made of it; each checks its text as it is typed.
struct EntryMessageDialog {
    /// The `AdwMessageDialog`.
    let window: Widget
    let entry: Widget
    /// What is wrong with the text; hidden while there is nothing to say.
    let message: Widget
    /// The suggested button's response ID.
    let response: String

    /// A dialog titled `heading` saying `body`, whose button `label` ("_Share") gives the
    /// response `response`; the entry is labelled `entryLabel` and holds `text`.
    init(parent: Widget, heading: String, body: String, response: String, label: String, entryLabel: String, text: String?) {
        self.response = response
        window = adw_message_dialog_new(parent.cast(), heading, body)
        let dialog: UnsafeMutablePointer<AdwMessageDialog> = window.cast()
        adw_message_dialog_add_response(dialog, "cancel", "_Cancel")
        adw_message_dialog_add_response(dialog, response, label)
        adw_message_dialog_set_response_appearance(dialog, response, ADW_RESPONSE_SUGGESTED)
        adw_message_dialog_set_default_response(dialog, response)
        adw_message_dialog_set_close_response(dialog, "cancel")
        entry = gtk_entry_new()
        gtk_entry_set_activates_default(entry.cast(), 1)
        if let text { gtk_editable_set_text(OpaquePointer(entry), text) }
        let title = makeLabel(entryLabel, naming: entry)
        gtk_label_set_xalign(title.opaque, 0)
        message = makeLabel(classes: ["dialog-error"])
        wrapAnywhere(message)
        adw_message_dialog_set_extra_child(dialog, makeBox(GTK_ORIENTATION_VERTICAL, spacing: 6, [title, entry, message]))
    }

    /// The text typed.
    var text: String { String(cString: gtk_editable_get_text(OpaquePointer(entry))) }

    /// Shows `problem` under the entry (nothing for nil or ""), and offers the button only
    /// when `acceptable`.
    func show(_ problem: String?, acceptable: Bool) {
        gtk_label_set_text(message.opaque, problem ?? "")
        message.isVisible = problem?.isEmpty == false
        adw_message_dialog_set_response_enabled(window.cast(), response, acceptable ? 1 : 0)
    }

    /// Calls `chosen` when the person chose the suggested button (the handlers keep their
    /// captures alive until the dialog's window is destroyed), and `changed` at each edit.
    func connect(changed: @escaping () -> Void, chosen: @escaping () -> Void) {
        let response = response
        Signal.connect(entry.object, "changed") { changed() }
        Signal.connect(window.object, "response") { (id: gpointer?) in
            guard let id, String(cString: id.assumingMemoryBound(to: CChar.self)) == response else { return }
            chosen()
        }
    }
}
