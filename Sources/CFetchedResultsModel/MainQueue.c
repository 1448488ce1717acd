#include "CFetchedResultsModel.h"

#include <poll.h>
#include <sys/eventfd.h>

// libdispatch's run-loop integration (private: declared by CoreFoundation, not in <dispatch/dispatch.h>).
extern int _dispatch_get_main_queue_handle_4CF (void);
extern void _dispatch_main_queue_callback_4CF (void *message);

int
fr_main_queue_handle (void)
{
  return _dispatch_get_main_queue_handle_4CF ();
}

void
fr_main_queue_drain (void)
{
  int fd = _dispatch_get_main_queue_handle_4CF ();
  struct pollfd ready = { .fd = fd, .events = POLLIN };
  // Read the eventfd only when it is readable, so that this never blocks.
  if (poll (&ready, 1, 0) == 1)
    {
      eventfd_t wakeups;
      eventfd_read (fd, &wakeups);
    }
  _dispatch_main_queue_callback_4CF (NULL);
}
