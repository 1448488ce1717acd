// libadwaita 1.2 for the viewer (Debian 12's libadwaita-1-dev): the GNOME widgets and styles
// on top of GTK 4. Only the Viewer uses it; GtkBinding needs GTK alone.
#include <adwaita.h>
//
// Its header includes GTK's, and Clang gives a declaration of a non-modular header to the
// module that includes it first: every Viewer file that uses GTK imports CAdw beside CGtk,
// or some of GTK's constants (GTK_PHASE_CAPTURE) are not found.
