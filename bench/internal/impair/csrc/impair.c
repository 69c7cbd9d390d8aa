/*
 * impair: a stand-in for `tc qdisc ... netem delay D loss P` on kernels
 * without sch_netem. iptables sends the packets to NFQUEUE queue Q; this
 * program drops each with probability P and releases the others D
 * microseconds after they arrived (in arrival order: the delay is constant).
 *
 *   impair QUEUE DELAY_US LOSS_PERCENT
 *
 * Runs until SIGTERM/SIGINT, then prints "queued N dropped M" on stderr.
 * Build: cc -O2 -o impair impair.c -lnetfilter_queue -lnfnetlink
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <libnfnetlink/libnfnetlink.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RING 65536

static struct {
	uint32_t id;
	uint64_t due;
} ring[RING];
static unsigned head, tail; /* tail - head entries waiting */
static uint64_t delay_ns;
static double loss;
static unsigned long long n_queued, n_dropped, n_overflow;
static volatile sig_atomic_t stop;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cb(struct nfq_q_handle *qh, struct nfgenmsg *msg, struct nfq_data *nfa, void *data)
{
	(void)msg;
	(void)data;
	struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
	if (!ph)
		return 0;
	uint32_t id = ntohl(ph->packet_id);
	if (drand48() < loss) {
		n_dropped++;
		return nfq_set_verdict(qh, id, NF_DROP, 0, NULL);
	}
	if (tail - head >= RING) { /* full: release at once rather than lose it */
		n_overflow++;
		return nfq_set_verdict(qh, id, NF_ACCEPT, 0, NULL);
	}
	ring[tail % RING].id = id;
	ring[tail % RING].due = now_ns() + delay_ns;
	tail++;
	n_queued++;
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: impair QUEUE DELAY_US LOSS_PERCENT\n");
		return 2;
	}
	int qnum = atoi(argv[1]);
	delay_ns = (uint64_t)(atof(argv[2]) * 1000);
	loss = atof(argv[3]) / 100;
	srand48((long)now_ns());
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);

	struct nfq_handle *h = nfq_open();
	if (!h) {
		perror("nfq_open");
		return 1;
	}
	struct nfq_q_handle *qh = nfq_create_queue(h, qnum, &cb, NULL);
	if (!qh) {
		perror("nfq_create_queue");
		return 1;
	}
	if (nfq_set_mode(qh, NFQNL_COPY_META, 0) < 0) {
		perror("nfq_set_mode");
		return 1;
	}
	nfq_set_queue_maxlen(qh, RING);
	int fd = nfq_fd(h);
	nfnl_rcvbufsiz(nfq_nfnlh(h), 8 << 20);
	char buf[4096] __attribute__((aligned));
	fprintf(stderr, "ready\n");
	while (!stop) {
		int timeout = 100;
		if (tail != head) {
			uint64_t n = now_ns(), due = ring[head % RING].due;
			timeout = due > n ? (int)((due - n) / 1000000) : 0;
		}
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = poll(&p, 1, timeout);
		if (r < 0 && errno != EINTR) {
			perror("poll");
			break;
		}
		if (r > 0) {
			for (;;) { /* drain what is ready */
				int n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
				if (n <= 0)
					break;
				nfq_handle_packet(h, buf, n);
			}
		}
		uint64_t n = now_ns();
		while (tail != head && ring[head % RING].due <= n) {
			nfq_set_verdict(qh, ring[head % RING].id, NF_ACCEPT, 0, NULL);
			head++;
		}
	}
	while (tail != head) { /* release the rest */
		nfq_set_verdict(qh, ring[head % RING].id, NF_ACCEPT, 0, NULL);
		head++;
	}
	fprintf(stderr, "queued %llu dropped %llu overflow %llu\n", n_queued, n_dropped, n_overflow);
	nfq_destroy_queue(qh);
	nfq_close(h);
	return 0;
}
