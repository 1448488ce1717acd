import CAdw
import CGtk
import Foundation
import GtkBinding

/// New List… and Rename List… (to-do: a section object's title): an entry checked as it is
/// typed. What is wrong with the title shows under it, and the button stays off while it
/// is empty, the same as before, or another list's title but for case ("home" beside
/// "Home" would be a second Home); the model's `maxLength` caps what can be typed.
final class SectionTitleDialog {
    /// An `AdwMessageDialog`.
    let window: Widget
    let entry: Widget
    /// What is wrong with the title; hidden while it is right (or not typed yet).
    let message: Widget
    /// Called with the title (trimmed) when the person chose the dialog's button.
    var didChoose: ((String) -> Void)?
    private let current: String?
    private let others: [String]
    private let word: String

    /// A dialog for a new section object (`current` nil) or for renaming the one titled
    /// `current`; `word` names the section entity ("List"), `others` are the titles the other
    /// section objects have.
    init(parent: Widget, word: String, current: String?, others: [String], maxLength: Int?) {
        self.current = current
        self.others = others
        self.word = word
        let heading = current == nil ? "New \(word)" : "Rename \(word)"
        let body = current.map { "A new title for “\($0)”." } ?? "An empty \(word.lowercased()) shows at once; add to it with Add."
        window = adw_message_dialog_new(parent.cast(), heading, body)
        let dialog: UnsafeMutablePointer<AdwMessageDialog> = window.cast()
        let button = current == nil ? "add" : "rename"
        adw_message_dialog_add_response(dialog, "cancel", "_Cancel")
        adw_message_dialog_add_response(dialog, button, current == nil ? "_Add" : "_Rename")
        adw_message_dialog_set_response_appearance(dialog, button, ADW_RESPONSE_SUGGESTED)
        adw_message_dialog_set_default_response(dialog, button)
        adw_message_dialog_set_close_response(dialog, "cancel")
        entry = gtk_entry_new()
        gtk_entry_set_activates_default(entry.cast(), 1)
        if let maxLength { gtk_entry_set_max_length(entry.cast(), gint(maxLength)) }
        if let current { gtk_editable_set_text(OpaquePointer(entry), current) }
        let title = makeLabel("Title", naming: entry)
        gtk_label_set_xalign(title.opaque, 0)
        message = makeLabel(classes: ["dialog-error"])
        wrapAnywhere(message)
        adw_message_dialog_set_extra_child(dialog, makeBox(GTK_ORIENTATION_VERTICAL, spacing: 6, [title, entry, message]))
        // The handlers keep the dialog alive until its window is destroyed.
        Signal.connect(entry.object, "changed") { [self] in self.check(button) }
        Signal.connect(window.object, "response") { [self] (response: gpointer?) in
            guard let response, String(cString: response.assumingMemoryBound(to: CChar.self)) == button, self.problem == nil else { return }
            self.didChoose?(self.title)
        }
        check(button)
    }

    func present() {
        gtk_window_present(window.cast())
        gtk_widget_grab_focus(entry)
    }

    /// The title typed, without spaces around it.
    var title: String {
        String(cString: gtk_editable_get_text(OpaquePointer(entry))).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Why the title typed cannot be taken (nil when it can); "" when there is nothing to
    /// say yet (empty, or unchanged).
    var problem: String? {
        if title.isEmpty || title == current { return "" }
        if let same = others.first(where: { $0.compare(title, options: .caseInsensitive) == .orderedSame }) {
            return "\(word) “\(same)” is there already: choose another title."
        }
        return nil
    }

    private func check(_ button: String) {
        let problem = problem
        gtk_label_set_text(message.opaque, problem ?? "")
        message.isVisible = problem?.isEmpty == false
        adw_message_dialog_set_response_enabled(window.cast(), button, problem == nil ? 1 : 0)
    }
}
