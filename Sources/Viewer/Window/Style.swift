import CAdw
import CGtk
import GtkBinding

/// The viewer's CSS, on top of the theme: header rows, row images, the detail pane.
enum Style {
    nonisolated(unsafe) private static var isInstalled = false

    static let css = """
        row.section-header-row, row.section-header-row:hover, row.section-header-row:selected {
          background: none;
          border-top: 1px solid alpha(currentColor, 0.15);
        }
        .section-header { font-weight: bold; padding: 14px 6px 4px 6px; }
        /* Over the list's top, as the list's own rows are inset (the row's 12 px and the header's 6 px). */
        .sticky-header { background-color: @view_bg_color; padding: 8px 18px 6px 18px; border-bottom: 1px solid alpha(currentColor, 0.15); }
        .object-row { padding: 4px 6px; }
        .section-empty { padding: 6px 6px 14px 6px; font-style: italic; }
        .row-subtitle { font-size: smaller; }
        .avatar { min-width: 36px; min-height: 36px; border-radius: 18px; color: white; font-weight: bold; font-size: smaller; }
        /* Dark enough for white initials (contrast at least 4.5:1), on the selection colour too. */
        .avatar-color-1 { background-color: #1a5fb4; }
        .avatar-color-2 { background-color: #0f6e7f; }
        .avatar-color-3 { background-color: #2b7a3a; }
        .avatar-color-4 { background-color: #946000; }
        .avatar-color-5 { background-color: #a04000; }
        .avatar-color-6 { background-color: #c01c28; }
        .avatar-color-7 { background-color: #a83c72; }
        .avatar-color-8 { background-color: #813d9c; }
        .counter-button { font-weight: bold; min-width: 36px; }
        .detail-pane { padding: 18px; }
        .detail-title { font-size: 1.5em; font-weight: bold; }
        .detail-heading { font-weight: bold; margin-top: 12px; }
        .dialog-content { padding: 18px; }
        .dialog-error { padding: 6px 10px; border-radius: 6px; color: #c01c28; background-color: alpha(#c01c28, 0.1); }
        .import-bar { padding: 6px 12px; border-bottom: 1px solid alpha(currentColor, 0.15); }
        .import-bar.import-error label { color: #c01c28; }
        .sharing-popover { padding: 6px; }
        /* The rows of the request before, while a search or a sort is fetched. */
        .stale-rows { opacity: 0.45; }
        .error-banner { padding: 8px 12px; background-color: @error_bg_color; color: @error_fg_color; }
        /* The selected row in blue, as GTK's own theme has it: libadwaita's faint grey is
           hard to find in a long list. A darker blue than the accent (#3584e4, 3.8:1 with
           white): white text reads at 6.3:1, dimmed text (0.85) at 5:1, light and dark. */
        listview.rich-list > row:selected { background-color: #1a5fb4; color: white; }
        listview.rich-list > row:selected .dim-label { opacity: 0.8; }
        """

    /// Adds the CSS to the default display (once).
    static func install() {
        guard !isInstalled, let display = gdk_display_get_default() else { return }
        isInstalled = true
        let provider = gtk_css_provider_new()
        gtk_css_provider_load_from_data(provider, css + rowStateCSS, -1)
        gtk_style_context_add_provider_for_display(display, OpaquePointer(provider), guint(GTK_STYLE_PROVIDER_PRIORITY_APPLICATION))
    }
}
