import CAdw
import CGtk
import Foundation
import GtkBinding

/// New List… and Rename List… (to-do: a section object's title): an entry checked as it is
/// typed. What is wrong with the title shows under it, and the button stays off while it
/// is empty, the same as before, or another list's title but for case ("home" beside
/// "Home" would be a second Home); the model's `maxLength` caps what can be typed.
final class SectionTitleDialog {
    private let dialog: EntryMessageDialog
    /// An `AdwMessageDialog`.
    var window: Widget { dialog.window }
    var entry: Widget { dialog.entry }
    /// What is wrong with the title; hidden while it is right (or not typed yet).
    var message: Widget { dialog.message }
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
        dialog = EntryMessageDialog(parent: parent, heading: current == nil ? "New \(word)" : "Rename \(word)",
                                    body: current.map { "A new title for “\($0)”." } ?? "An empty \(word.lowercased()) shows at once; add to it with Add.",
                                    response: current == nil ? "add" : "rename", label: current == nil ? "_Add" : "_Rename",
                                    entryLabel: "Title", text: current)
        if let maxLength { gtk_entry_set_max_length(dialog.entry.cast(), gint(maxLength)) }
        dialog.connect(changed: { [self] in self.check() }, chosen: { [self] in
            if self.problem == nil { self.didChoose?(self.title) }
        })
        check()
    }

    func present() {
        gtk_window_present(window.cast())
        gtk_widget_grab_focus(entry)
    }

    /// The title typed, without spaces around it.
    var title: String {
        dialog.text.trimmingCharacters(in: .whitespacesAndNewlines)
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

    private func check() {
        dialog.show(problem, acceptable: problem == nil)
    }
}
