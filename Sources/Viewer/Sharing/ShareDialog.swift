import CAdw
import CGtk
import Foundation
import GtkBinding
import Sharing

/// Share… asks for the PostgreSQL database to share the list through. The address is
/// checked as it is typed (``ServerConfiguration/init(url:environment:)``): what is wrong with
/// it shows under it, and Share stays off until it is an address.
final class ShareDialog {
    private let dialog: EntryMessageDialog
    /// An `AdwMessageDialog`.
    var window: Widget { dialog.window }
    var entry: Widget { dialog.entry }
    /// What is wrong with the address; hidden while it is right (or empty).
    var message: Widget { dialog.message }
    /// Called with the address when the person chose Share.
    var didShare: ((String) -> Void)?

    /// The dialog, its entry holding `address` (the server the store shared through last).
    init(parent: Widget, address: String? = nil) {
        dialog = EntryMessageDialog(parent: parent, heading: "Share This List",
                                    body: "Other desktops that share the same PostgreSQL database see the changes made here as they are made, and this window shows theirs. The password comes from PGPASSWORD or ~/.pgpass.",
                                    response: "share", label: "_Share", entryLabel: "Server", text: address)
        gtk_entry_set_placeholder_text(dialog.entry.cast(), "postgresql://USER@HOST[:PORT]/DATABASE")
        dialog.connect(changed: { [self] in self.check() }, chosen: { [self] in self.didShare?(self.url) })
        check()
    }

    func present() {
        gtk_window_present(window.cast())
    }

    /// The address typed, without spaces around it.
    var url: String {
        dialog.text.trimmingCharacters(in: .whitespaces)
    }

    /// Says what is wrong with the address, and offers Share only for one that is right.
    private func check() {
        var problem: String?
        if !url.isEmpty {
            do { _ = try ServerConfiguration(url: url) } catch let error as SharingError where error.kind == .invalidURL {
                problem = "Not a server address: \(error.reason). Write postgresql://USER@HOST[:PORT]/DATABASE"
            } catch {
                problem = "\(error)"
            }
        }
        dialog.show(problem, acceptable: !url.isEmpty && problem == nil)
    }
}
