// GTK 4 for Swift: everything from <gtk/gtk.h>, which includes GLib, GObject and GIO.
#include <gtk/gtk.h>
