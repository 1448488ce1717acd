import CGtk

/// Where a row of a list view is inside the scrolled window (or other parent) around the list.
package struct RowPlace {
    /// The row's top and bottom edges, from the top of the scrolled window.
    package let top: Float, bottom: Float
    /// The height of the scrolled window.
    package let shownHeight: Float

    /// The place of `row`, a mapped widget inside `listView`; nil when it has none.
    package init?(of row: UnsafeMutablePointer<GtkWidget>, in listView: UnsafeMutablePointer<GtkWidget>) {
        guard gtk_widget_get_mapped(row) != 0, let scrolled = gtk_widget_get_parent(listView) else { return nil }
        var bounds = graphene_rect_t()
        guard gtk_widget_compute_bounds(row, scrolled, &bounds) != 0 else { return nil }
        top = bounds.origin.y
        bottom = bounds.origin.y + bounds.size.height
        shownHeight = Float(gtk_widget_get_height(scrolled))
    }

    /// Whether all of the row shows (a pixel of rounding either way allowed).
    package var isWhollyShown: Bool { top >= -1 && bottom <= shownHeight + 1 }

    /// Whether some of the row shows.
    package var isPartlyShown: Bool { bottom > 0 && top < shownHeight }
}
