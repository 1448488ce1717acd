// The C half of the viewer: only what Swift cannot express.
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

// MARK: Accessibility

/// Sets (NULL: removes) the description assistive technologies read for `widget`, as
/// gtk_widget_set_tooltip_text does with the tooltip (gtk_accessible_update_property is variadic).
void fr_widget_set_description (GtkWidget *widget, const char *description);

G_END_DECLS
