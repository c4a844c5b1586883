import { ref } from 'vue';

/** Bumped whenever a webhook trigger is created, so open trigger lists reload. */
export const triggersChanged = ref(0);
