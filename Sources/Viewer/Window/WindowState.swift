import CAdw
import CGtk
import Foundation

/// The window's size, whether it is maximized, and the dataset it shows, kept when it closes
/// and restored on the next launch, as GNOME apps do.
///
/// Installed (meson installs `org.fetchedresults.Viewer.gschema.xml`), they are GSettings
/// keys; run from the build tree, where no schema is installed, the same keys go to a key
/// file, `$XDG_CONFIG_HOME/fetched-results/window.ini`. A missing or unreadable file is a
/// first launch, never an error.
@MainActor struct WindowState: Equatable {
    static let schemaID = "org.fetchedresults.Viewer"

    var width = 900
    var height = 640
    var isMaximized = false
    var dataset: String?

    /// The key file used when the schema is not installed.
    static var keyFileURL: URL {
        URL(fileURLWithPath: String(cString: g_get_user_config_dir())).appendingPathComponent("fetched-results/window.ini")
    }

    /// The installed schema's settings; nil when it is not installed.
    private static func settings() -> UnsafeMutablePointer<GSettings>? {
        guard let source = g_settings_schema_source_get_default(),
              let schema = g_settings_schema_source_lookup(source, schemaID, 1) else { return nil }
        defer { g_settings_schema_unref(schema) }
        return g_settings_new_full(schema, nil, nil)
    }

    /// What was kept at the last close (the defaults at the first launch).
    static func load() -> WindowState {
        var state = WindowState()
        if let settings = settings() {
            defer { g_object_unref(UnsafeMutableRawPointer(settings)) }
            state.width = Int(g_settings_get_int(settings, "window-width"))
            state.height = Int(g_settings_get_int(settings, "window-height"))
            state.isMaximized = g_settings_get_boolean(settings, "window-maximized") != 0
            state.dataset = g_settings_get_string(settings, "last-dataset").map { text in
                defer { g_free(text) }
                return String(cString: text)
            }
            return state
        }
        let file = g_key_file_new()!
        defer { g_key_file_free(file) }
        guard g_key_file_load_from_file(file, keyFileURL.path, G_KEY_FILE_NONE, nil) != 0 else { return state }
        func integer(_ key: String) -> Int? {
            var error: UnsafeMutablePointer<GError>?
            let value = g_key_file_get_integer(file, "window", key, &error)
            if let error { g_error_free(error); return nil }
            return Int(value)
        }
        state.width = integer("width") ?? state.width
        state.height = integer("height") ?? state.height
        state.isMaximized = g_key_file_get_boolean(file, "window", "maximized", nil) != 0
        state.dataset = g_key_file_get_string(file, "window", "dataset", nil).map { text in
            defer { g_free(text) }
            return String(cString: text)
        }
        return state
    }

    /// Keeps this state for the next launch; a folder or file that cannot be written is
    /// left as it is (the next launch opens with the defaults).
    func save() {
        if let settings = Self.settings() {
            defer { g_object_unref(UnsafeMutableRawPointer(settings)) }
            g_settings_set_int(settings, "window-width", gint(width))
            g_settings_set_int(settings, "window-height", gint(height))
            g_settings_set_boolean(settings, "window-maximized", isMaximized ? 1 : 0)
            g_settings_set_string(settings, "last-dataset", dataset ?? "")
            g_settings_sync()
            return
        }
        let file = g_key_file_new()!
        defer { g_key_file_free(file) }
        g_key_file_set_integer(file, "window", "width", gint(width))
        g_key_file_set_integer(file, "window", "height", gint(height))
        g_key_file_set_boolean(file, "window", "maximized", isMaximized ? 1 : 0)
        if let dataset { g_key_file_set_string(file, "window", "dataset", dataset) }
        let url = Self.keyFileURL
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        _ = g_key_file_save_to_file(file, url.path, nil)
    }
}

extension ViewerWindow {
    /// Keeps the window's size (GTK 4 keeps its default size as the person resizes it, not
    /// while maximized), whether it is maximized and its dataset, for the next launch.
    func keepState() {
        var state = WindowState()
        state.isMaximized = gtk_window_is_maximized(window.cast()) != 0
        var width: gint = 0, height: gint = 0
        gtk_window_get_default_size(window.cast(), &width, &height)
        if width > 0, height > 0 { (state.width, state.height) = (Int(width), Int(height)) }
        state.dataset = session?.dataset.name
        state.save()
    }
}
