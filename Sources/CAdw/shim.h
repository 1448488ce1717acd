// libadwaita 1.2 for the viewer (Debian 12's libadwaita-1-dev): the GNOME widgets and styles
// on top of GTK 4. Only the Viewer uses it; GtkBinding needs GTK alone.
#include <adwaita.h>
