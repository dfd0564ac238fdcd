/**
 * The diseases of the guessing game (handlers/guess.ts): each with the names a guess may use and the
 * symptoms the patient reveals, vaguest first.
 */

export interface Disease {
  /** The first name is the one the game shows when it ends. */
  readonly names: readonly string[]
  readonly symptoms: readonly string[]
}

export const DISEASES: readonly Disease[] = [
  { names: ['influenza', 'flu'], symptoms: ['I feel exhausted and want to stay in bed', 'my muscles ache all over', 'a fever came on within a few hours', 'I have a dry cough'] },
  { names: ['chickenpox', 'varicella'], symptoms: ['I felt tired for a day or two', 'I have a mild fever', 'itchy spots appeared on my chest', 'the spots turned into small blisters, new ones keep coming'] },
  { names: ['migraine'], symptoms: ['my head hurts, mostly on one side', 'light bothers me a lot', 'I feel sick to my stomach', 'before the pain I saw zigzag lines'] },
  { names: ['appendicitis'], symptoms: ['I have no appetite', 'my belly hurt around the navel', 'the pain moved down to the lower right', 'it hurts more when I cough or walk'] },
  { names: ['asthma'], symptoms: ['I cough at night', 'my chest feels tight', 'I get out of breath on the stairs', 'my breathing whistles'] },
  { names: ['strep throat', 'streptococcal pharyngitis'], symptoms: ['my throat got sore very fast', 'swallowing hurts', 'the glands in my neck are swollen', 'my tonsils are red with white patches'] },
  { names: ['gout'], symptoms: ['the pain woke me up at night', 'one joint is red and hot', 'it is the joint of my big toe', 'even the bed sheet touching it hurts'] },
  { names: ['measles', 'rubeola'], symptoms: ['I have a runny nose and a cough', 'my eyes are red and watery', 'I have a high fever', 'a rash started on my face and spread downwards'] },
]

/** Whether `guess` names `disease` (case, spaces and a leading article do not matter). */
export function names(disease: Disease, guess: string): boolean {
  const wanted = guess.trim().toLowerCase().replace(/^(a|an|the)\s+/, '').replace(/\s+/g, ' ')
  return disease.names.includes(wanted)
}
