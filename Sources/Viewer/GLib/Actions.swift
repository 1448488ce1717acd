import CAdw
import CGtk
import GtkBinding

/// Window actions (`win.NAME`) that run Swift closures, for menus, toasts and shortcuts.
enum Action {
    /// Adds the action `name` to `map` (a `GActionMap`: the window) and returns it (owned by
    /// the map). With `state` (an integer), it is a stateful action of integers: menu items
    /// with targets show as radio items, and activating one sets the state. `body` gets the
    /// parameter (nil without one); it lives as long as the action: capture owners weakly.
    /// With `parameterType` (a GVariant type string: "s"), it is an action of such a
    /// parameter without a state.
    @discardableResult
    static func add(to map: UnsafeMutableRawPointer, _ name: String, state: Int32? = nil, parameterType: String? = nil,
                    _ body: @escaping (OpaquePointer?) -> Void) -> OpaquePointer {
        let action: OpaquePointer
        if let state {
            let type = g_variant_type_new("i")
            action = g_simple_action_new_stateful(name, type, g_variant_new_int32(state))
            g_variant_type_free(type)
        } else if let parameterType {
            let type = g_variant_type_new(parameterType)
            action = g_simple_action_new(name, type)
            g_variant_type_free(type)
        } else {
            action = g_simple_action_new(name, nil)
        }
        // `activate` gets the parameter (a GVariant), as GtkBinding's one-pointer signals do.
        Signal.connect(UnsafeMutableRawPointer(action), "activate") { (parameter: gpointer?) in
            let parameter = parameter.map(OpaquePointer.init)
            if let parameter, state != nil { g_simple_action_set_state(action, parameter) }
            body(parameter)
        }
        g_action_map_add_action(OpaquePointer(map), action)
        g_object_unref(UnsafeMutableRawPointer(action))
        return action
    }

    /// Adds a check action (a menu's check item) named `name`, off; `body` gets the state a
    /// person asked for, which the action takes only when ``setOn(_:_:)`` says so.
    static func addCheck(to map: UnsafeMutableRawPointer, _ name: String, _ body: @escaping (Bool) -> Void) -> OpaquePointer {
        let action = g_simple_action_new_stateful(name, nil, g_variant_new_boolean(0))!
        Signal.connect(UnsafeMutableRawPointer(action), "activate") { (_: gpointer?) in
            guard let state = g_action_get_state(action) else { return }
            defer { g_variant_unref(state) }
            body(g_variant_get_boolean(state) == 0)
        }
        g_action_map_add_action(OpaquePointer(map), action)
        g_object_unref(UnsafeMutableRawPointer(action))
        return action
    }

    /// Shows a check action (from ``addCheck(to:_:_:)``) on or off.
    static func setOn(_ action: OpaquePointer, _ isOn: Bool) {
        g_simple_action_set_state(action, g_variant_new_boolean(isOn ? 1 : 0))
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
