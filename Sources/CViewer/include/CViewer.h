// The C half of the viewer: only what Swift cannot express.
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

// MARK: Accessibility (gtk_accessible_update_property, _relation and _state are variadic)

/// Sets (NULL: removes) a text property of `widget` that assistive technologies read: its
/// name (GTK_ACCESSIBLE_PROPERTY_LABEL) or its description (as a tooltip sets it).
void fr_accessible_set_text (GtkWidget *widget, GtkAccessibleProperty property, const char *text);

/// Names `widget` by the text of `label` (GTK_ACCESSIBLE_RELATION_LABELLED_BY).
void fr_accessible_set_labelled_by (GtkWidget *widget, GtkWidget *label);

/// Hides `widget` from assistive technologies (or shows it again).
void fr_accessible_set_hidden (GtkWidget *widget, gboolean hidden);

/// A new label with another accessible role (a heading): the role is fixed at construction,
/// which g_object_new's variadic properties give.
GtkWidget *fr_label_new_with_role (GtkAccessibleRole role);

// MARK: Rendering

/// Whether OpenGL on `display` is drawn by the CPU (Mesa's llvmpipe, softpipe or swrast: a
/// virtual X server such as Xvfb, a virtual machine, a remote desktop without a GPU). FALSE
/// when there is no OpenGL at all.
gboolean fr_gl_renderer_is_software (GdkDisplay *display);

G_END_DECLS
