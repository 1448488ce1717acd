import CAdw
import CGtk
import GtkBinding
import Foundation

/// Pictures of widgets, drawn by GTK's own renderer: no display server screenshot needed.
package enum Screenshot {
    /// Renders `widget` as it is now (laid out and shown) and saves it as a PNG file.
    package static func save(_ widget: UnsafeMutablePointer<GtkWidget>, to url: URL) throws {
        let width = gtk_widget_get_width(widget), height = gtk_widget_get_height(widget)
        guard width > 0, height > 0, let native = gtk_widget_get_native(widget), let renderer = gtk_native_get_renderer(native) else {
            throw ViewerError("the window is not shown yet, so it cannot be drawn")
        }
        let paintable = gtk_widget_paintable_new(widget)
        defer { g_object_unref(UnsafeMutableRawPointer(paintable)) }
        let snapshot = gtk_snapshot_new()
        gdk_paintable_snapshot(paintable, snapshot, Double(width), Double(height))
        guard let node = gtk_snapshot_free_to_node(snapshot) else {
            throw ViewerError("the window drew nothing")
        }
        defer { gsk_render_node_unref(node) }
        var bounds = graphene_rect_t()
        graphene_rect_init(&bounds, 0, 0, Float(width), Float(height))
        let texture = gsk_renderer_render_texture(renderer, node, &bounds)
        defer { g_object_unref(UnsafeMutableRawPointer(texture)) }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard gdk_texture_save_to_png(texture, url.path) != 0 else {
            throw ViewerError("cannot write \(url.path)")
        }
    }
}
