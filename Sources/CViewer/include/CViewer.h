// The C half of the viewer: only what Swift cannot express.
#pragma once

#include <gtk/gtk.h>
#include <glib-unix.h>

G_BEGIN_DECLS

// MARK: The Dispatch main queue in a GLib main loop

/// The file descriptor (an eventfd) that becomes readable when work is queued on the Dispatch
/// main queue: libdispatch's run-loop hook (`_dispatch_get_main_queue_handle_4CF`, the one
/// CoreFoundation's run loop uses), which Dispatch's public headers do not declare.
int fr_main_queue_handle (void);

/// Clears the handle's wake-up and runs the work queued on the main queue
/// (`_dispatch_main_queue_callback_4CF`). Call on the main thread only.
void fr_main_queue_drain (void);

// MARK: Accessibility

/// Sets (NULL: removes) the description assistive technologies read for `widget`, as
/// gtk_widget_set_tooltip_text does with the tooltip (gtk_accessible_update_property is variadic).
void fr_widget_set_description (GtkWidget *widget, const char *description);

G_END_DECLS
