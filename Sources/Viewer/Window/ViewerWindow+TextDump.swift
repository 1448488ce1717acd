import CAdw
import CGtk
import Datasets
import GtkBinding

/// Reading the window back: what it shows, as text, and where its rows are.
extension ViewerWindow {
    /// What the window shows, as text: the title, the list's rows (headers in brackets, the
    /// selected row marked with `>`, the others selected with it with `+`), the detail pane,
    /// and what the sharing indicator says.
    /// For tests and `--dump`.
    package var textDump: String {
        guard let session else { return "" }
        var lines = ["title: \(String(cString: gtk_window_get_title(window.cast())))"]
        let selected = session.selection.selectedPosition
        for position in 0..<session.rows.count {
            if let object = session.object(atPosition: position) {
                let view = session.view
                let subtitle = view.row.subtitle.map { " · " + ViewConfiguration.render($0, for: object) } ?? ""
                let check = view.toggle.map { object.attributeValue(forKey: $0) == .bool(true) ? "[x] " : "[ ] " } ?? ""
                let mark = position == selected ? ">" : gtk_selection_model_is_selected(session.selection.selectionModel, guint(position)) != 0 ? "+" : " "
                lines.append("\(mark) \(check)\(ViewConfiguration.render(view.row.title, for: object))\(subtitle)")
            } else if case .header(let section) = session.rows.item(at: position) {
                let info = session.controller.sections![section]
                lines.append("[\(session.view.sectionTitle(forSectionName: info.name))]" + (info.numberOfObjects == 0 ? " (nothing here yet)" : ""))
            }
        }
        if let shownToast { lines.append("toast: \(shownToast)") }
        lines.append("detail:")
        lines += detail.text.split(separator: "\n").map { "  " + $0 }
        if let sharing = sharingIndicator.text { lines.append("sharing: \(sharing)") }
        return lines.joined(separator: "\n")
    }

    /// Where the list and its rows are, in the coordinates of the window's surface (its X
    /// window), for driving it from outside with xdotool: `list @ x y width height` (the
    /// visible area; before it `window @ 0 0 width height`, the window's size as it is kept when it closes), then `[HEADER] @ …` for the section headers and `TITLE @ …` for the
    /// rows GTK has laid out, each row followed by ` counter x y` (the centre of its +1
    /// button) when it shows one.
    package var layoutDump: String {
        guard let native = gtk_widget_get_native(window) else { return "" }
        var surfaceX = 0.0, surfaceY = 0.0
        gtk_native_get_surface_transform(native, &surfaceX, &surfaceY)
        func place(_ widget: Widget) -> String? {
            var bounds = graphene_rect_t()
            guard gtk_widget_compute_bounds(widget, window, &bounds) != 0 else { return nil }
            let x = Int(Double(bounds.origin.x) + surfaceX), y = Int(Double(bounds.origin.y) + surfaceY)
            return "\(x) \(y) \(Int(bounds.size.width)) \(Int(bounds.size.height))"
        }
        // The list's visible area (its scrolled window), then the section headers and rows
        // GTK has laid out, on screen or not.
        var width: gint = 0, height: gint = 0
        gtk_window_get_default_size(window.cast(), &width, &height)
        let size = "window @ 0 0 \(width) \(height)"
        let visible = gtk_widget_get_parent(listView).flatMap(place).map { "list @ \($0)" }
        let laidOut = listView.descendants.filter { gtk_widget_get_mapped($0) != 0 }
        let headers = laidOut.filter { gtk_widget_has_css_class($0, "section-header") != 0 }
            .compactMap { header in place(header).map { "[\(labelText(header))] @ \($0)" } }
        let rows = laidOut.filter { gtk_widget_has_css_class($0, "object-row") != 0 }
            .compactMap { row -> String? in
                guard let title = row.descendants.first(where: { gtk_widget_has_css_class($0, "row-title") != 0 }),
                      let rowPlace = place(row) else { return nil }
                var line = "\(labelText(title)) @ \(rowPlace)"
                var bounds = graphene_rect_t()
                if let counter = row.descendants.first(where: { gtk_widget_has_css_class($0, "counter-button") != 0 && gtk_widget_get_mapped($0) != 0 }),
                   gtk_widget_compute_bounds(counter, window, &bounds) != 0 {
                    line += " counter \(Int(Double(bounds.origin.x + bounds.size.width / 2) + surfaceX)) \(Int(Double(bounds.origin.y + bounds.size.height / 2) + surfaceY))"
                }
                return line
            }
        // Nothing until the list shows (the benchmark waits for that).
        guard visible != nil else { return "" }
        return ([size, visible].compactMap { $0 } + headers + rows).joined(separator: "\n")
    }
}
