/*
 * unwind.c - a program linked as the static client is (client/client.mk,
 * client/frames.c): a thread blocked in pause() is cancelled, which unwinds
 * its stack through libgcc to run its cleanup handler.  Exit 0 and one line
 * when the handler ran and the thread ended cancelled; without the frame
 * table header (--eh-frame-hdr) the unwinder finds no frame and aborts.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static volatile int cleaned_up;

static void cleanup(void *arg)
{
	(void)arg;
	cleaned_up = 1;
}

static void *blocked(void *arg)
{
	(void)arg;
	pthread_cleanup_push(cleanup, NULL);
	for (;;)
		pause();
	pthread_cleanup_pop(0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	void *result = NULL;
	if (pthread_create(&t, NULL, blocked, NULL) != 0)
		return 2;
	usleep(50 * 1000);
	pthread_cancel(t);
	pthread_join(t, &result);
	int ok = cleaned_up && result == PTHREAD_CANCELED;
	printf("cancelled thread unwound: %s\n", ok ? "yes" : "no");
	return ok ? 0 : 1;
}
