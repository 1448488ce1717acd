#include "CViewer.h"

#include <dlfcn.h>
#include <string.h>

gboolean
fr_gl_renderer_is_software (GdkDisplay *display)
{
  GError *error = NULL;
  GdkGLContext *context = gdk_display_create_gl_context (display, &error);
  if (context == NULL)
    {
      g_clear_error (&error);
      return FALSE;
    }
  gboolean software = FALSE;
  if (gdk_gl_context_realize (context, &error))
    {
      gdk_gl_context_make_current (context);
      // GTK calls OpenGL through libepoxy, which holds each function in a pointer of its
      // own: glGetString is `epoxy_glGetString`, found where GTK loaded it.
      typedef const unsigned char *(*GetString) (unsigned int name);
      GetString *get_string = dlsym (RTLD_DEFAULT, "epoxy_glGetString");
      const char *renderer = get_string != NULL && *get_string != NULL ? (const char *) (*get_string) (0x1F01 /* GL_RENDERER */) : NULL;
      software = renderer != NULL
                 && (strstr (renderer, "llvmpipe") != NULL || strstr (renderer, "softpipe") != NULL
                     || strstr (renderer, "swrast") != NULL || strstr (renderer, "Software Rasterizer") != NULL);
      gdk_gl_context_clear_current ();
    }
  g_clear_error (&error);
  g_object_unref (context);
  return software;
}
