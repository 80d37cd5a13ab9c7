/* The NAAICE connection states, shared by the AP1 (compat/naaice.h) and AP2 (naa.h) C APIs so a
 * program may include both. Values as in the reference's naaice.h. */
#ifndef NAA_HOST_NAAICE_STATE_H
#define NAA_HOST_NAAICE_STATE_H

typedef enum naaice_communication_state {
  NAAICE_INIT = 0,            /* starting state */
  NAAICE_READY = 1,           /* address resolved (host only) */
  NAAICE_CONNECTED = 2,       /* connection established */
  NAAICE_DISCONNECTED = 3,    /* connection disconnected */
  NAAICE_MRSP_SENDING = 10,   /* sending the MRSP advertisement + request */
  NAAICE_MRSP_RECEIVING = 11, /* waiting for the NAA's MRSP answer */
  NAAICE_MRSP_DONE = 12,      /* MRSP finished */
  NAAICE_DATA_SENDING = 20,   /* writing the inputs */
  NAAICE_CALCULATING = 21,    /* the NAA runs the routine */
  NAAICE_DATA_RECEIVING = 22, /* waiting for the results */
  NAAICE_FINISHED = 30,       /* the call finished */
  NAAICE_ERROR = 40           /* error state */
} naaice_communication_state;

#endif /* NAA_HOST_NAAICE_STATE_H */
