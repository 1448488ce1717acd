import CAdw
import CGtk
import CViewer
import GtkBinding

/// The sign that a search or a new sort order is being fetched: a spinner at the end of the
/// search entry, and the rows shown meanwhile dimmed and marked busy for screen readers,
/// since they are the old request's rows, not its results. (At a million rows a search
/// takes most of a second, as long as a fresh fetch.)
///
/// Each ``begin(dimming:)`` supersedes the one before, as the fetch it stands for does:
/// only the newest one's ``end(_:)`` takes the sign away.
@MainActor final class FetchProgress {
    let spinner: Widget
    private var generation = 0
    private var dimmed: Widget?

    init() {
        spinner = gtk_spinner_new()
        spinner.isVisible = false
        gtk_widget_set_tooltip_text(spinner, "Searching…")
        fr_accessible_set_text(spinner, GTK_ACCESSIBLE_PROPERTY_LABEL, "Searching")
    }

    /// Whether a fetch is under way.
    var isBusy: Bool { dimmed != nil }

    /// Shows that a fetch began, dimming `rows` until it ends; returns what ends it.
    func begin(dimming rows: Widget) -> Int {
        generation += 1
        if let dimmed, dimmed != rows { clear(dimmed) }
        dimmed = rows
        rows.addClass("stale-rows")
        fr_accessible_set_busy(rows, 1)
        spinner.isVisible = true
        gtk_spinner_start(spinner.opaque)
        return generation
    }

    /// The fetch `token` stands for ended (shown, failed or superseded): the sign goes when
    /// it was the newest.
    func end(_ token: Int) {
        guard token == generation, let dimmed else { return }
        clear(dimmed)
        self.dimmed = nil
        gtk_spinner_stop(spinner.opaque)
        spinner.isVisible = false
    }

    private func clear(_ rows: Widget) {
        rows.removeClass("stale-rows")
        fr_accessible_set_busy(rows, 0)
    }
}
