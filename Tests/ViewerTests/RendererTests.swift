import CGtk
import CViewer
import Foundation
@testable import Viewer
import XCTest

/// The renderer the window draws with.
final class RendererTests: ViewerTestCase, @unchecked Sendable {
    /// Where OpenGL is drawn by the CPU (Xvfb here), the window draws with cairo: GTK 4.8
    /// would take OpenGL, and its frames would compete with the app for the cores.
    func testTheWindowDrawsWithCairoWhereOpenGLIsSoftware() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        if let given = Renderer.givenRenderer { throw XCTSkip("GSK_RENDERER=\(given) was set from outside, and kept") }
        let renderer = try XCTUnwrap(gtk_native_get_renderer(OpaquePointer(window.window)), "the shown window has a renderer")
        let name = String(cString: g_type_name_from_instance(UnsafeMutableRawPointer(renderer).assumingMemoryBound(to: GTypeInstance.self)))
        guard let display = gdk_display_get_default(), fr_gl_renderer_is_software(display) != 0 else {
            throw XCTSkip("OpenGL here is not drawn by the CPU, or there is none: GTK chose \(name)")
        }
        XCTAssertEqual(name, "GskCairoRenderer", "OpenGL here is drawn by the CPU")
        let chosen = g_object_get_data(UnsafeMutableRawPointer(display).assumingMemoryBound(to: GObject.self), "gsk-renderer")
        XCTAssertEqual(chosen.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }, "cairo", "the display's choice")
    } }
}
