import CAdw
import CGtk
import GtkBinding

/// Window actions (`win.NAME`) that run Swift closures, for menus, toasts and shortcuts.
enum Action {
    /// Adds the action `name` to `map` (a `GActionMap`: the window) and returns it (owned by
    /// the map). With `state` (an integer), it is a stateful action of integers: menu items
    /// with targets show as radio items, and activating one sets the state. `body` gets the
    /// parameter (nil without one); it lives as long as the action: capture owners weakly.
    @discardableResult
    static func add(to map: UnsafeMutableRawPointer, _ name: String, state: Int32? = nil,
                    _ body: @escaping (OpaquePointer?) -> Void) -> OpaquePointer {
        let action: OpaquePointer
        if let state {
            let type = g_variant_type_new("i")
            action = g_simple_action_new_stateful(name, type, g_variant_new_int32(state))
            g_variant_type_free(type)
        } else {
            action = g_simple_action_new(name, nil)
        }
        // `activate` gets the parameter (a GVariant), as GtkBinding's one-pointer signals do.
        Signal.connect(UnsafeMutableRawPointer(action), "activate") { (parameter: gpointer?) in
            let parameter = parameter.map(OpaquePointer.init)
            if let parameter { g_simple_action_set_state(action, parameter) }
            body(parameter)
        }
        g_action_map_add_action(OpaquePointer(map), action)
        g_object_unref(UnsafeMutableRawPointer(action))
        return action
    }

    /// Makes `action` (from ``add(to:_:state:_:)``) usable or not.
    static func setEnabled(_ action: OpaquePointer, _ enabled: Bool) {
        g_simple_action_set_enabled(action, enabled ? 1 : 0)
    }

    /// Whether `action` can be activated.
    static func isEnabled(_ action: OpaquePointer) -> Bool {
        g_action_get_enabled(action) != 0
    }
}
