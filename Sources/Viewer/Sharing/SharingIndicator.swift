import CAdw
import CGtk
import CViewer
import GtkBinding
import Sharing

/// The header bar's sharing indicator: an icon that says where the store stands with its
/// server (shared, offline with the changes waiting, resyncing, connecting) in its tooltip
/// and to screen readers; a click opens a popover with the server, the state in full, how
/// the connection is secured and Stop Sharing. Hidden while the store does not share.
/// While a long transfer goes on (joining a big database, a big store's first push), a
/// progress bar under the header bar says how far it got.
final class SharingIndicator {
    /// A `GtkMenuButton`.
    let widget: Widget
    /// A `GtkProgressBar`, shown while a long transfer goes on.
    let progressBar: Widget
    private let serverLabel: Widget
    private let stateLabel: Widget
    private let reasonLabel: Widget
    private let securityLabel: Widget
    /// What the indicator says (its tooltip and accessible name); nil while hidden.
    private(set) var text: String?
    private var shown: SharingStatus.State?
    /// What the popover says of the connection's security; nil before the first connection.
    private(set) var securityText: String?

    init() {
        widget = gtk_menu_button_new()
        widget.addClass("flat")
        let title = makeLabel("Shared Through", classes: ["heading"])
        serverLabel = makeLabel()
        stateLabel = makeLabel()
        reasonLabel = makeLabel(classes: ["dim-label"])
        securityLabel = makeLabel(classes: ["dim-label"])
        for label in [serverLabel, stateLabel, reasonLabel, securityLabel] {
            wrapAnywhere(label)
            gtk_label_set_max_width_chars(label.opaque, 40)
        }
        // An address has no spaces to break at.
        gtk_label_set_wrap_mode(serverLabel.opaque, PANGO_WRAP_WORD_CHAR)
        let stop = makeButton(mnemonic: "_Stop Sharing")
        gtk_actionable_set_action_name(OpaquePointer(stop), "win.stop-sharing")
        gtk_widget_set_halign(stop, GTK_ALIGN_END)
        let content = makeBox(GTK_ORIENTATION_VERTICAL, spacing: 6, [title, serverLabel, stateLabel, securityLabel, reasonLabel, stop])
        content.addClass("sharing-popover")
        let popover = gtk_popover_new()!
        gtk_popover_set_child(popover.cast(), content)
        gtk_menu_button_set_popover(widget.opaque, popover)
        widget.isVisible = false
        progressBar = gtk_progress_bar_new()
        progressBar.addClass("sharing-progress")
        gtk_progress_bar_set_show_text(progressBar.opaque, 1)
        gtk_progress_bar_set_ellipsize(progressBar.opaque, PANGO_ELLIPSIZE_END)
        gtk_widget_set_margin_start(progressBar, 12)
        gtk_widget_set_margin_end(progressBar, 12)
        gtk_widget_set_margin_top(progressBar, 6)
        gtk_widget_set_margin_bottom(progressBar, 6)
        fr_accessible_set_text(progressBar, GTK_ACCESSIBLE_PROPERTY_LABEL, "Sharing progress")
        progressBar.isVisible = false
    }

    /// What the progress bar says; nil while it is hidden.
    private(set) var progressText: String?

    /// Shows how far a long transfer got, or hides the bar.
    private func showProgress(_ transfer: SharingStatus.Transfer?) {
        progressText = transfer.map(Self.describe)
        progressBar.isVisible = transfer != nil
        guard let transfer, let progressText else { return }
        gtk_progress_bar_set_fraction(progressBar.opaque, transfer.fraction)
        gtk_progress_bar_set_text(progressBar.opaque, progressText)
        fr_accessible_set_text(progressBar, GTK_ACCESSIBLE_PROPERTY_VALUE_TEXT, progressText)
    }

    /// A transfer in words: "Taking 5,000 of 20,032 rows from the server".
    static func describe(_ transfer: SharingStatus.Transfer) -> String {
        let count = { (number: Int) in number.formatted(.number) }
        switch transfer.direction {
        case .taking: return "Taking \(count(transfer.done)) of \(count(transfer.total)) rows from the server"
        case .sending: return "Sending \(count(transfer.done)) of \(count(transfer.total)) rows to the server"
        }
    }

    /// Shows `status`; nil (or a stopped session) hides the indicator.
    func show(_ status: SharingStatus?) {
        showProgress(status?.transfer)
        guard let status, let (icon, state) = Self.describe(status) else {
            widget.isVisible = false
            text = nil
            shown = nil
            return
        }
        // Offline, each attempt to connect again would flash "Connecting": offline it stays
        // until the server answers.
        if case .offline = shown, status.state == .connecting { return }
        shown = status.state
        // What the icon stands for, the server included where it is one.
        let text: String
        switch status.state {
        case .connected:
            let quiet = status.pendingChanges == 0 && !status.isReadOnly && status.transfer == nil
            text = "Shared through \(status.server)" + (quiet ? "" : ", \(state.prefix(1).lowercased() + state.dropFirst())")
        case .connecting: text = "Connecting to \(status.server)…"
        default: text = state
        }
        self.text = text
        gtk_menu_button_set_icon_name(widget.opaque, icon)
        gtk_widget_set_tooltip_text(widget, text)
        fr_accessible_set_text(widget, GTK_ACCESSIBLE_PROPERTY_LABEL, text)
        gtk_label_set_text(serverLabel.opaque, status.server)
        gtk_label_set_text(stateLabel.opaque, state)
        securityText = status.security.map(Self.describe)
        securityLabel.isVisible = securityText != nil
        if let securityText {
            gtk_label_set_text(securityLabel.opaque, securityText)
            securityLabel.setClass("warning", status.security == .plain)
        }
        if let reason = status.readOnlyReason {
            let why = reason.prefix(1).uppercased() + reason.dropFirst()
            gtk_label_set_text(reasonLabel.opaque, "\(why). Changes made here stay in this store.")
            reasonLabel.isVisible = true
        } else if case .offline(let reason) = status.state {
            let why = reason.prefix(1).uppercased() + reason.dropFirst()
            gtk_label_set_text(reasonLabel.opaque, "\(why). Changes made here are kept in this store and sent once the server can be reached.")
            reasonLabel.isVisible = true
        } else {
            reasonLabel.isVisible = false
        }
        widget.isVisible = true
    }

    /// How the connection is secured, in words, with what to do when it is not.
    static func describe(_ security: SharingStatus.Security) -> String {
        switch security {
        case .plain: return "Not encrypted: what is shared can be read on the network. The server's address can ask for TLS (sslmode=verify-full)."
        case .encrypted: return "Encrypted. The server's certificate is not checked (sslmode=verify-full checks it)."
        case .verifiedAuthority: return "Encrypted. The server's certificate is signed by a trusted authority."
        case .verifiedHost: return "Encrypted. The server's certificate is checked: it is the server named."
        }
    }

    /// The icon and the state in words for `status`; nil when stopped.
    static func describe(_ status: SharingStatus) -> (icon: String, state: String)? {
        let changes = status.pendingChanges == 1 ? "1 change" : "\(status.pendingChanges) changes"
        switch status.state {
        case .connected where status.isReadOnly:
            return ("network-server-symbolic", "Read-only" + (status.pendingChanges == 0 ? "" : ", \(changes) kept here"))
        case .connected:
            if let transfer = status.transfer { return ("network-server-symbolic", describe(transfer)) }
            return ("network-server-symbolic", status.pendingChanges == 0 ? "Connected" : "Sending \(changes)")
        case .offline:
            return ("network-offline-symbolic", status.pendingChanges == 0 ? "Offline" : "Offline, \(changes) waiting")
        case .resyncing:
            return ("view-refresh-symbolic", "Resyncing…")
        case .connecting:
            return ("view-refresh-symbolic", "Connecting…")
        case .stopped:
            return nil
        }
    }
}
