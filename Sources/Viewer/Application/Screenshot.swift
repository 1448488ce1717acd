import CAdw
import CGtk
import GtkBinding
import Foundation

/// Pictures of widgets, drawn by GTK's own renderer: no display server screenshot needed.
package enum Screenshot {
    /// Renders `widget` as it is now (laid out and shown) and saves it as a PNG file.
    package static func save(_ widget: UnsafeMutablePointer<GtkWidget>, to url: URL) throws {
        let texture = try render(widget)
        defer { g_object_unref(UnsafeMutableRawPointer(texture)) }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard gdk_texture_save_to_png(texture, url.path) != 0 else {
            throw ViewerError("cannot write \(url.path)")
        }
    }

    /// The pixels of `widget` as it is drawn now, to measure what a person sees (the
    /// contrast of a label's text).
    package static func pixels(of widget: UnsafeMutablePointer<GtkWidget>) throws -> Pixels {
        let texture = try render(widget)
        defer { g_object_unref(UnsafeMutableRawPointer(texture)) }
        let width = Int(gdk_texture_get_width(texture)), height = Int(gdk_texture_get_height(texture))
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        bytes.withUnsafeMutableBufferPointer { gdk_texture_download(texture, $0.baseAddress, gsize(width * 4)) }
        return Pixels(width: width, height: height, bytes: bytes)
    }

    /// A drawing's pixels: 4 bytes each, row by row, as `gdk_texture_download` gives them
    /// (Cairo's ARGB32, premultiplied, in the machine's byte order).
    package struct Pixels: Sendable {
        package var width: Int
        package var height: Int
        package var bytes: [UInt8]

        /// The colour at (`x`, `y`), 0–255 per channel, over black where it is transparent.
        package func color(x: Int, y: Int) -> (red: Int, green: Int, blue: Int) {
            let i = (y * width + x) * 4
            return (Int(bytes[i + 2]), Int(bytes[i + 1]), Int(bytes[i]))
        }
    }

    private static func render(_ widget: UnsafeMutablePointer<GtkWidget>) throws -> OpaquePointer {
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
        return gsk_renderer_render_texture(renderer, node, &bounds)
    }
}
