import CGtk
import CViewer

/// Which of GTK's renderers draws the windows.
enum Renderer {
    /// Whether ``choose()`` ran.
    private static var chosen = false
    /// `GSK_RENDERER` as ``choose()`` found it: a renderer named from outside, kept.
    private(set) static var givenRenderer: String?

    /// Draws with GTK's cairo renderer when OpenGL would be drawn by the CPU (Xvfb, a
    /// virtual machine, a remote desktop without a GPU), unless `GSK_RENDERER` names one.
    /// GTK 4.8 takes OpenGL whenever it can, and Mesa's llvmpipe then draws every frame on
    /// the same cores as the app, in threads of its own: at a million rows under Xvfb an
    /// import's frames took 30–55 ms that way, the longest stalls of the window, and the
    /// import took half as long again as with cairo (Docs/Performance.md). Call once GTK is
    /// initialized, before the window is shown.
    ///
    /// The choice is the display's `gsk-renderer`, which GTK reads each time it makes a
    /// renderer, before `GSK_RENDERER` (which it reads once, for the process's first).
    static func choose() {
        guard !chosen else { return }
        chosen = true
        givenRenderer = g_getenv("GSK_RENDERER").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        guard givenRenderer == nil, let display = gdk_display_get_default(), fr_gl_renderer_is_software(display) != 0 else { return }
        g_object_set_data_full(UnsafeMutableRawPointer(display).assumingMemoryBound(to: GObject.self), "gsk-renderer", g_strdup("cairo"), g_free)
    }
}
